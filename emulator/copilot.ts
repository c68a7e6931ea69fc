/**
 * Microsoft 365 Copilot interaction history under `/graph` (reference §5.5 "AI interaction history"):
 * `GET /{v1.0|beta}/copilot/users/{userId}/interactionHistory/getAllEnterpriseInteractions`, its deterministic
 * generator (prompt + response pairs for the users holding a Microsoft 365 Copilot licence, some with planted secrets,
 * personal data and near-misses) and the ground truth a tester recomputes from the model.
 *
 * Sources: Graph `api-reference/{v1.0,beta}/api/aiinteractionhistory-getallenterpriseinteractions.md` (application
 * permission AiEnterpriseInteraction.Read.All only; `$top`, `$filter` on createdDateTime gt/lt and appClass eq;
 * `@odata.count`; `@odata.nextLink` with `$skiptoken`), `resources/aiinteraction.md`; the Copilot SKU id from Graph's
 * `cloudlicensing-userusageright-get.md` example (`skuPartNumber: Microsoft_365_Copilot`).
 * UNCONFIRMED (no source found): the answer for a user without a Copilot licence (served: 200, empty `value`), the
 * order of items (served: createdDateTime ascending), the `$top` maximum (served: 1..999, default 100).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildQuery, decodeCursor, encodeCursor, queryParam, type EmulatorContext } from './common.ts';
import { createRng, type Rng } from './prng.ts';
import { indexes, type DirectoryUser, type Tenant } from './tenant.ts';

/** Microsoft 365 Copilot (`Microsoft_365_Copilot`) SKU id. */
export const COPILOT_SKU_ID = '639dec6b-bb19-468b-871c-c5c441c4b0cb';
/** The application permission the endpoint requires (delegated is not supported). */
export const AI_INTERACTION_ROLE = 'AiEnterpriseInteraction.Read.All';

/** App classes the endpoint documents (`IPM.SkypeTeams.Message.Copilot.*`). */
export const APP_CLASSES = ['Word', 'Excel', 'Teams', 'BizChat', 'WebChat'].map((a) => `IPM.SkypeTeams.Message.Copilot.${a}`);

/** What was planted in an interaction's body (emulator-only, never served). */
export interface PlantedContent {
  /** Secret values planted (each must be found and never stored in clear). */
  secrets: string[];
  /** Personal-data values planted (valid card numbers, SSNs). */
  personal: string[];
  /** Look-alikes that must NOT be flagged (a 16-digit number failing Luhn, an SSN in an invalid range). */
  nearMisses: string[];
}

/** One stored interaction: the Graph `aiInteraction` as served, and what was planted in it. */
export interface StoredInteraction {
  wire: Record<string, unknown>;
  planted: PlantedContent;
}

/** The Copilot model of a tenant (`Tenant.copilot`): interactions by user id, createdDateTime ascending. */
export interface CopilotModel {
  interactions: Record<string, StoredInteraction[]>;
}

/** Sizes of the Copilot model (`TenantSizes` keys). */
export interface CopilotSizes {
  /** Percentage of enabled members holding a Microsoft 365 Copilot licence: exactly floor(percent × members / 100). */
  copilotUsersPercent: number;
  /** Prompt + response pairs per licensed user (each user gets 1..this many). */
  copilotPairsPerUser: number;
}

/** Shares of prompts carrying planted content (seeded draws per pair). */
const PLANT_RATES = { secret: 0.12, personal: 0.12, nearMiss: 0.15 } as const;

const DAY_MS = 86_400_000;
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const PROMPTS = [
  'Summarise the last meeting about the {topic} project.',
  'Draft an email to the team about {topic}.',
  'What are the open actions on {topic}?',
  'Create a table of the {topic} budget by quarter.',
  'Rewrite this paragraph about {topic} in a friendlier tone.',
];
const TOPICS = ['Contoso migration', 'Q3 forecast', 'supplier onboarding', 'HR policy', 'data platform', 'marketing launch'];

/** A card number of `prefix` + random digits with a valid (or, with `valid: false`, a wrong) Luhn check digit. */
function cardNumber(rng: Rng, valid = true): string {
  let body = `4${rng.chars(14, '0123456789')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  const check = (10 - (sum % 10)) % 10;
  body += String(valid ? check : (check + 1 + rng.int(0, 8)) % 10);
  return body;
}

function ssn(rng: Rng, valid = true): string {
  const area = valid ? rng.pick([rng.int(1, 665), rng.int(667, 899)]) : rng.pick([0, 666, rng.int(900, 999)]);
  return `${String(area).padStart(3, '0')}-${String(rng.int(1, 99)).padStart(2, '0')}-${String(rng.int(1, 9999)).padStart(4, '0')}`;
}

function awsKey(rng: Rng): string {
  return `AKIA${rng.chars(16, UPPER_DIGITS)}`;
}

function storageConnectionString(rng: Rng): string {
  return `DefaultEndpointsProtocol=https;AccountName=st${rng.chars(10, 'abcdefghijklmnopqrstuvwxyz0123456789')};AccountKey=${rng.chars(86, B64)}==;EndpointSuffix=core.windows.net`;
}

/** Builds one prompt + response pair for `user`, the prompt at `atMs` and the response 0.8–9 s later. */
function pair(rng: Rng, tenantId: string, user: DirectoryUser, atMs: number): StoredInteraction[] {
  const topic = rng.pick(TOPICS);
  let prompt = rng.pick(PROMPTS).replace('{topic}', topic);
  const planted: PlantedContent = { secrets: [], personal: [], nearMisses: [] };
  if (rng.chance(PLANT_RATES.secret)) {
    const secret = rng.chance(0.5) ? awsKey(rng) : storageConnectionString(rng);
    planted.secrets.push(secret);
    prompt += ` The deployment script uses ${secret} for the upload.`;
  }
  if (rng.chance(PLANT_RATES.personal)) {
    const card = cardNumber(rng);
    const id = ssn(rng);
    planted.personal.push(card, id);
    prompt += ` Update the record of the customer with card ${card} and SSN ${id}.`;
  }
  if (rng.chance(PLANT_RATES.nearMiss)) {
    const almost = cardNumber(rng, false);
    const badSsn = ssn(rng, false);
    planted.nearMisses.push(almost, badSsn);
    prompt += ` Reference numbers ${almost} and ${badSsn}.`;
  }
  const sessionId = `19:${rng.chars(40, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_')}@thread.v2`;
  const requestId = rng.guid();
  const appClass = rng.pick(APP_CLASSES);
  const conversationType = appClass.endsWith('BizChat') || appClass.endsWith('WebChat') ? 'bizchat' : 'appchat';
  const base = { sessionId, requestId, appClass, conversationType, locale: 'en-us', links: [], mentions: [] };
  const promptAt = atMs;
  const responseAt = atMs + rng.int(800, 9000);
  const contexts = rng.chance(0.5)
    ? [
        {
          contextReference: `https://${tenantId}.sharepoint.com/sites/projects/${rng.chars(8, 'abcdefgh')}.docx`,
          displayName: `${topic}.docx`,
          contextType: 'File',
        },
      ]
    : [];
  const promptWire = {
    id: String(promptAt),
    ...base,
    interactionType: 'userPrompt',
    etag: String(promptAt),
    createdDateTime: new Date(promptAt).toISOString(),
    contexts,
    from: {
      '@odata.type': '#microsoft.graph.chatMessageFromIdentitySet',
      device: null,
      application: null,
      user: { '@odata.type': '#microsoft.graph.teamworkUserIdentity', id: user.id, displayName: user.displayName, userIdentityType: 'aadUser', tenantId },
    },
    body: { contentType: 'text', content: prompt },
    attachments: [],
  };
  const responseWire = {
    id: String(responseAt),
    ...base,
    interactionType: 'aiResponse',
    etag: String(responseAt),
    createdDateTime: new Date(responseAt).toISOString(),
    contexts: [],
    from: {
      '@odata.type': '#microsoft.graph.chatMessageFromIdentitySet',
      device: null,
      user: null,
      application: {
        '@odata.type': '#microsoft.graph.teamworkApplicationIdentity',
        id: 'fb8d773d-7ef8-4ec0-a117-179f88add510',
        displayName: 'Microsoft 365 Chat',
        applicationIdentityType: 'bot',
      },
    },
    body: { contentType: 'text', content: `Here is what I found about ${topic}: three open items and one decision pending.` },
    attachments: [],
  };
  return [
    { wire: promptWire, planted },
    { wire: responseWire, planted: { secrets: [], personal: [], nearMisses: [] } },
  ];
}

function holdsCopilot(u: DirectoryUser): boolean {
  return (u.assignedLicenses ?? []).some((l) => l.skuId === COPILOT_SKU_ID);
}

/**
 * Gives exactly floor(percent × enabled members / 100) members the Copilot licence (`assignedLicenses`; every other user gets
 * `[]`) and generates their interaction history over the 30 days before `nowMs`. Uses its own rng
 * (`{seed}:copilot`), so no value generated before changes. Cost: O(users + interactions).
 */
export function generateCopilot(users: DirectoryUser[], tenantId: string, sizes: CopilotSizes, seed: number | string, nowMs: number): CopilotModel {
  const rng = createRng(`${String(seed)}:copilot`);
  const members = users.filter((u) => u.userType === 'Member' && u.accountEnabled);
  const licensed = rng.shuffle(members).slice(0, Math.floor((sizes.copilotUsersPercent * members.length) / 100));
  for (const u of users) u.assignedLicenses = [];
  const interactions: Record<string, StoredInteraction[]> = {};
  for (const u of licensed) {
    u.assignedLicenses = [{ disabledPlans: [], skuId: COPILOT_SKU_ID }];
    const pairs = rng.int(1, Math.max(1, sizes.copilotPairsPerUser));
    const times = Array.from({ length: pairs }, () => nowMs - rng.int(60_000, 30 * DAY_MS)).sort((a, b) => a - b);
    // Keep pair times apart so ids (epoch milliseconds) never collide within a user.
    for (let i = 1; i < times.length; i++) if (times[i]! < times[i - 1]! + 10_000) times[i] = times[i - 1]! + 10_000;
    interactions[u.id] = times.flatMap((t) => pair(rng, tenantId, u, t));
  }
  return { interactions };
}

/**
 * Adds `pairs` new prompt + response pairs to every licensed user (or to `userIds`), dated after the user's latest
 * interaction and after `after` (ISO, default the current time). Seeded by `seed` (default a counter per call).
 * @returns the interactions added (wire objects), by user id.
 * @throws RangeError for an unknown or unlicensed user id, or `pairs` < 1.
 */
export function addCopilotInteractions(
  tenant: Tenant,
  options: { pairs?: number; userIds?: string[]; after?: string; seed?: string } = {},
): Record<string, Record<string, unknown>[]> {
  const pairs = options.pairs ?? 1;
  if (!Number.isInteger(pairs) || pairs < 1) throw new RangeError(`pairs must be a positive integer, got ${String(pairs)}`);
  tenant.copilot ??= { interactions: {} };
  const model = tenant.copilot;
  const users = options.userIds
    ? options.userIds.map((id) => {
        const u = indexes.users.get(tenant.users, id);
        if (!u || !holdsCopilot(u)) throw new RangeError(`user ${id} does not exist or holds no Microsoft 365 Copilot licence`);
        return u;
      })
    : tenant.users.filter(holdsCopilot);
  const rng = createRng(options.seed ?? `${tenant.id}:copilot-add:${Object.values(model.interactions).reduce((n, l) => n + l.length, 0)}`);
  const floor = options.after ? Date.parse(options.after) : Date.now();
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const u of users) {
    const list = (model.interactions[u.id] ??= []);
    let t = Math.max(floor, ...list.map((i) => Date.parse(String(i.wire.createdDateTime)))) + 60_000;
    const added: StoredInteraction[] = [];
    for (let p = 0; p < pairs; p++) {
      added.push(...pair(rng, tenant.id, u, t));
      t += 60_000;
    }
    list.push(...added);
    out[u.id] = added.map((i) => i.wire);
  }
  return out;
}

/** What a complete collection of the Copilot interaction history must find. */
export interface CopilotGroundTruth {
  /** Users holding the Copilot licence (one request each per round, with no paging at `$top=100` here). */
  licensedUsers: number;
  /** Interactions over all licensed users. */
  interactions: number;
  /** Interactions with at least one planted secret. */
  withSecrets: number;
  /** Interactions with planted personal data. */
  withPersonal: number;
  /** Interactions with planted near-misses (and nothing else planted must make them flagged). */
  withNearMissesOnly: number;
  /** Every planted secret and personal value (to check none is stored in clear). */
  plantedValues: string[];
  /** Every planted near-miss value. */
  nearMissValues: string[];
}

/** Recomputes the Copilot ground truth from the tenant model alone. */
export function copilotGroundTruth(tenant: Tenant): CopilotGroundTruth {
  const licensed = tenant.users.filter(holdsCopilot);
  const truth: CopilotGroundTruth = {
    licensedUsers: licensed.length,
    interactions: 0,
    withSecrets: 0,
    withPersonal: 0,
    withNearMissesOnly: 0,
    plantedValues: [],
    nearMissValues: [],
  };
  for (const u of licensed) {
    for (const i of tenant.copilot?.interactions[u.id] ?? []) {
      truth.interactions++;
      if (i.planted.secrets.length) truth.withSecrets++;
      if (i.planted.personal.length) truth.withPersonal++;
      if (i.planted.nearMisses.length && !i.planted.secrets.length && !i.planted.personal.length) truth.withNearMissesOnly++;
      truth.plantedValues.push(...i.planted.secrets, ...i.planted.personal);
      truth.nearMissValues.push(...i.planted.nearMisses);
    }
  }
  return truth;
}

// --- route -------------------------------------------------------------------------------------------------------

/** The Graph helpers the route needs (from graph.ts, passed in to keep one implementation). */
export interface CopilotRouteDeps {
  authenticate: (req: FastifyRequest, reply: FastifyReply) => Promise<{ tenant: Tenant; claims: { roles?: string[]; idtyp?: string } } | null>;
  sendError: (req: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string) => FastifyReply;
}

interface Filter {
  gt?: number;
  ge?: number;
  lt?: number;
  le?: number;
  appClasses?: Set<string>;
}

/** Parses the supported `$filter`: `createdDateTime gt|ge|lt|le {ISO}` and `appClass eq '…'` (or-ed), joined by `and`. */
export function parseInteractionFilter(raw: string | undefined): Filter | string {
  const f: Filter = {};
  if (raw === undefined || raw.trim() === '') return f;
  for (const part of raw.split(/\s+and\s+/i)) {
    const p = part.trim().replace(/^\((.*)\)$/, '$1');
    const date = /^createdDateTime\s+(gt|ge|lt|le)\s+'?(\d{4}-\d{2}-\d{2}T[\d:.]+Z)'?$/i.exec(p);
    if (date) {
      const ms = Date.parse(date[2]!);
      if (Number.isNaN(ms)) return `Invalid date '${date[2]}' in $filter.`;
      f[date[1]!.toLowerCase() as 'gt' | 'ge' | 'lt' | 'le'] = ms;
      continue;
    }
    const classes = p.split(/\s+or\s+/i).map((c) => /^appClass\s+eq\s+'([^']+)'$/i.exec(c.trim())?.[1]);
    if (classes.every((c): c is string => c !== undefined)) {
      f.appClasses = new Set(classes);
      continue;
    }
    return `Unsupported $filter clause '${p}': only createdDateTime gt/ge/lt/le and appClass eq are supported.`;
  }
  return f;
}

function matches(f: Filter, wire: Record<string, unknown>): boolean {
  const t = Date.parse(String(wire.createdDateTime));
  if (f.gt !== undefined && !(t > f.gt)) return false;
  if (f.ge !== undefined && !(t >= f.ge)) return false;
  if (f.lt !== undefined && !(t < f.lt)) return false;
  if (f.le !== undefined && !(t <= f.le)) return false;
  if (f.appClasses && !f.appClasses.has(String(wire.appClass))) return false;
  return true;
}

/**
 * Registers `GET /{v1.0|beta}/copilot/users/{userId}/interactionHistory/getAllEnterpriseInteractions` (mount under
 * `/graph`). Errors: 401 from Graph's token check; 403 `Authorization_RequestDenied` without the application permission
 * AiEnterpriseInteraction.Read.All (delegated tokens too); 404 `Request_ResourceNotFound` for an unknown user; 400
 * `BadRequest` for an unsupported `$filter`, `$top` outside 1..999 or a bad `$skiptoken`.
 */
export function registerCopilot(app: FastifyInstance, ctx: EmulatorContext, deps: CopilotRouteDeps): void {
  for (const version of ['v1.0', 'beta']) {
    app.get<{ Params: { userId: string } }>(`/${version}/copilot/users/:userId/interactionHistory/getAllEnterpriseInteractions`, async (req, reply) => {
      const auth = await deps.authenticate(req, reply);
      if (!auth) return reply;
      if (auth.claims.idtyp === 'user' || !(auth.claims.roles ?? []).includes(AI_INTERACTION_ROLE)) {
        return deps.sendError(req, reply, 403, 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.');
      }
      const user = indexes.users.get(auth.tenant.users, req.params.userId);
      if (!user)
        return deps.sendError(
          req,
          reply,
          404,
          'Request_ResourceNotFound',
          `Resource '${req.params.userId}' does not exist or one of its queried reference-property objects are not present.`,
        );
      const topRaw = queryParam(req, '$top');
      const top = topRaw === undefined ? 100 : /^\d+$/.test(topRaw) ? Number(topRaw) : NaN;
      if (!Number.isInteger(top) || top < 1 || top > 999)
        return deps.sendError(req, reply, 400, 'BadRequest', `Invalid page size specified: '${String(topRaw)}'. Must be between 1 and 999 inclusive.`);
      const filterRaw = queryParam(req, '$filter');
      const filter = parseInteractionFilter(filterRaw);
      if (typeof filter === 'string') return deps.sendError(req, reply, 400, 'BadRequest', filter);

      const all = holdsCopilot(user) ? (auth.tenant.copilot?.interactions[user.id] ?? []) : [];
      const items = all.filter((i) => matches(filter, i.wire));
      const collection = `copilot:${user.id}:${filterRaw ?? ''}`;
      let start = 0;
      const skiptoken = queryParam(req, '$skiptoken');
      if (skiptoken !== undefined) {
        const c = decodeCursor(skiptoken);
        if (!c || c.c !== collection)
          return deps.sendError(req, reply, 400, 'BadRequest', 'The specified page token value has expired and can no longer be included in your request.');
        const at = items.findIndex((i) => i.wire.id === c.last);
        start = at >= 0 ? at + 1 : Math.min(c.index, items.length);
      }
      const slice = items.slice(start, start + top);
      const end = start + slice.length;
      const base = `${ctx.baseUrl()}/graph/${version}/copilot/users/${user.id}/interactionHistory/getAllEnterpriseInteractions`;
      const body: Record<string, unknown> = {
        '@odata.context': `${ctx.baseUrl()}/graph/${version}/$metadata#Collection(microsoft.graph.aiInteraction)`,
        '@odata.count': items.length,
      };
      const last = slice[slice.length - 1];
      if (end < items.length && last) {
        body['@odata.nextLink'] = `${base}${buildQuery([
          ['$top', topRaw],
          ['$filter', filterRaw],
          ['$skiptoken', encodeCursor({ c: collection, index: end, last: String(last.wire.id) })],
        ])}`;
      }
      body.value = slice.map((i) => i.wire);
      return reply.type('application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8').send(body);
    });
  }
}

/**
 * Control route (mount under `/_emulator`): `POST /copilot/{tid}/interactions` body `{pairs?, userIds?, after?, seed?}`
 * → 201 the added interactions by user id (see {@link addCopilotInteractions}); `GET /copilot/{tid}/ground-truth`.
 */
export function registerCopilotControl(app: FastifyInstance, ctx: EmulatorContext): void {
  const tenantOf = (tid: string): Tenant | undefined => ctx.store.get(tid);
  app.post<{ Params: { tid: string }; Body: unknown }>('/copilot/:tid/interactions', async (req, reply) => {
    const tenant = tenantOf(req.params.tid);
    if (!tenant) return reply.code(404).send({ error: { code: 'NotFound', message: `no tenant ${req.params.tid}` } });
    const o = (req.body && typeof req.body === 'object' ? req.body : {}) as { pairs?: number; userIds?: string[]; after?: string; seed?: string };
    try {
      return reply.code(201).send(addCopilotInteractions(tenant, o));
    } catch (e) {
      return reply.code(400).send({ error: { code: 'InvalidObject', message: (e as Error).message } });
    }
  });
  app.get<{ Params: { tid: string } }>('/copilot/:tid/ground-truth', async (req, reply) => {
    const tenant = tenantOf(req.params.tid);
    if (!tenant) return reply.code(404).send({ error: { code: 'NotFound', message: `no tenant ${req.params.tid}` } });
    return reply.send(copilotGroundTruth(tenant));
  });
}
