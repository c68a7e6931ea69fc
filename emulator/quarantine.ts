/**
 * The Power Platform API's Copilot Studio quarantine operations (`copilotstudio` namespace; the `powervirtualagents`
 * namespace is deprecated), for the bots of the tenant's generated Dataverse environments, with the quarantine state
 * kept per bot.
 *
 * Wire facts (Microsoft Learn, "Quarantine noncompliant agents with the Power Platform API",
 * https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api; REST reference "Bots",
 * https://learn.microsoft.com/rest/api/power-platform/copilotstudio/bots):
 * - `GET  {api}/copilotstudio/environments/{EnvironmentId}/bots/{BotId}/api/botQuarantine?api-version=1` ("Get Bot
 *   Quarantine Status"; the admin page writes the path with a `/GetBotQuarantineStatus` suffix — both are served, as it
 *   is UNCONFIRMED which one the service routes) → `{isBotQuarantined, lastUpdateTimeUtc}`;
 * - `POST …/api/botQuarantine/SetAsQuarantined?api-version=1` and `POST …/api/botQuarantine/SetAsUnquarantined
 *   ?api-version=1` (no body) → the same status object (the connector "Power Platform for Admins V2" types both
 *   answers as `BotQuarantineStatus`; Learn does not show the answer: UNCONFIRMED);
 * - prerequisites: a USER access token from Microsoft Entra ID whose user holds Global Administrator, AI Administrator
 *   or Power Platform Administrator, acquired with the client id of an app registration that has the Power Platform API
 *   delegated permission `CopilotStudio.AdminActions.Invoke`; token audience `https://api.powerplatform.com`.
 *
 * Errors: Learn documents none. The emulator answers in the Power Platform envelope `{"error":{"code","message"}}` it
 * uses for BAP: 400 `MissingApiVersionParameter`; 401 `MissingAuthenticationToken` / `InvalidAuthenticationToken` /
 * `InvalidAuthenticationTokenAudience`; 403 `Forbidden` for an app-only token, a user token without the permission in
 * `scp`, or a user without one of the roles in `wids`; 404 `EnvironmentNotFound` / `BotNotFound`. Codes and texts are
 * UNCONFIRMED (the emulator's own), see README.md.
 *
 * Shares no code with `src/`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newId, type EmulatorContext } from './common.ts';
import { DIRECTORY_ROLES, RESOURCES } from './constants.ts';
import { authenticatePowerPlatform } from './powerplatform.ts';
import { findEnvironment, indexes, type Bot, type Tenant } from './tenant.ts';

/** The delegated Power Platform API permission the quarantine operations need (admin-quarantine-api). */
const QUARANTINE_PERMISSION = 'CopilotStudio.AdminActions.Invoke';

/** Entra role template id of AI Administrator (Entra built-in roles reference). */
const AI_ADMINISTRATOR = 'd2562ede-74db-457e-a7b6-544e236ebb61';

/** The roles admin-quarantine-api names: Global Administrator, AI Administrator, Power Platform Administrator. */
const QUARANTINE_ROLES: readonly string[] = [DIRECTORY_ROLES.globalAdministrator, AI_ADMINISTRATOR, DIRECTORY_ROLES.powerPlatformAdministrator];

/** A bot's quarantine state as the API answers it. */
export interface BotQuarantineStatus {
  isBotQuarantined: boolean;
  /** ISO time of the last change (never changed: the bot's publication time, else the time of the first read). */
  lastUpdateTimeUtc: string;
}

const STATES = new WeakMap<Bot, BotQuarantineStatus>();

/** The stored state of a bot (not quarantined, last changed at its publication time or now, when never set). */
export function quarantineOf(bot: Bot): BotQuarantineStatus {
  let s = STATES.get(bot);
  if (!s) {
    s = { isBotQuarantined: false, lastUpdateTimeUtc: bot.publishedon ?? new Date().toISOString() };
    STATES.set(bot, s);
  }
  return s;
}

/** Sets a bot's state (control API and the POST operations). */
export function setQuarantine(bot: Bot, quarantined: boolean, at = new Date()): BotQuarantineStatus {
  const s = { isBotQuarantined: quarantined, lastUpdateTimeUtc: at.toISOString() };
  STATES.set(bot, s);
  return s;
}

/** A bot of an environment of the tenant, or undefined. */
export function findBot(tenant: Tenant, environmentId: string, botId: string): Bot | undefined {
  const env = findEnvironment(tenant, environmentId);
  return env?.dataverse ? indexes.bots.get(env.dataverse.bots, botId.toLowerCase()) : undefined;
}

function ppError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('x-ms-correlation-id', newId()).type('application/json; charset=utf-8').send({ error: { code, message } });
}

const ROLE_NAMES = 'Global Administrator, AI Administrator or Power Platform Administrator';

/**
 * Authenticates as every Power Platform service does ({@link authenticatePowerPlatform}: api-version, token, audience
 * `https://api.powerplatform.com`), then needs a delegated token with the permission, of a user holding one of the
 * roles; returns the tenant or null when the error reply was sent.
 */
async function authorize(ctx: EmulatorContext, req: FastifyRequest, reply: FastifyReply): Promise<Tenant | null> {
  const auth = await authenticatePowerPlatform(ctx, req, reply, [RESOURCES.powerPlatform], true);
  if (!auth) return null;
  const { tenant, claims: c } = auth;
  if (c.idtyp === 'app') {
    ppError(
      reply,
      403,
      'Forbidden',
      `Application ${c.appid} called with an app-only token. Copilot Studio admin actions need a user access token with the delegated permission ${QUARANTINE_PERMISSION}.`,
    );
    return null;
  }
  const scp = (typeof c.scp === 'string' ? c.scp : '').split(' ');
  if (!scp.includes(QUARANTINE_PERMISSION)) {
    ppError(
      reply,
      403,
      'Forbidden',
      `The access token of application ${c.appid} does not grant the delegated permission ${QUARANTINE_PERMISSION} of the Power Platform API.`,
    );
    return null;
  }
  if (!(c.wids ?? []).some((w) => QUARANTINE_ROLES.includes(w))) {
    ppError(reply, 403, 'Forbidden', `The user '${c.upn ?? c.oid}' must be a ${ROLE_NAMES} to invoke Copilot Studio admin actions.`);
    return null;
  }
  return tenant;
}

interface Params {
  env: string;
  bot: string;
}

function botOf(tenant: Tenant, p: Params, reply: FastifyReply): Bot | null {
  const env = findEnvironment(tenant, p.env);
  if (!env) {
    ppError(reply, 404, 'EnvironmentNotFound', `The environment '${p.env}' could not be found in the tenant '${tenant.id}'.`);
    return null;
  }
  const bot = findBot(tenant, p.env, p.bot);
  if (!bot) {
    ppError(reply, 404, 'BotNotFound', `The bot '${p.bot}' could not be found in the environment '${p.env}'.`);
    return null;
  }
  return bot;
}

function send(reply: FastifyReply, s: BotQuarantineStatus): FastifyReply {
  return reply
    .header('x-ms-correlation-id', newId())
    .type('application/json; charset=utf-8')
    .send({ isBotQuarantined: s.isBotQuarantined, lastUpdateTimeUtc: s.lastUpdateTimeUtc });
}

/** Registers the three operations under the Power Platform API prefix (`/powerplatform`). */
export function registerQuarantine(app: FastifyInstance, ctx: EmulatorContext): void {
  const base = '/copilotstudio/environments/:env/bots/:bot/api/botQuarantine';
  const status = async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<FastifyReply> => {
    const tenant = await authorize(ctx, req, reply);
    if (!tenant) return reply;
    const bot = botOf(tenant, req.params, reply);
    return bot ? send(reply, quarantineOf(bot)) : reply;
  };
  app.get<{ Params: Params }>(base, status);
  app.get<{ Params: Params }>(`${base}/GetBotQuarantineStatus`, status);
  for (const [op, value] of [
    ['SetAsQuarantined', true],
    ['SetAsUnquarantined', false],
  ] as const) {
    app.post<{ Params: Params }>(`${base}/${op}`, async (req, reply) => {
      const tenant = await authorize(ctx, req, reply);
      if (!tenant) return reply;
      const bot = botOf(tenant, req.params, reply);
      return bot ? send(reply, setQuarantine(bot, value)) : reply;
    });
  }
}

/** 404 for any other path under the Power Platform API prefix. */
export function powerPlatformNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return ppError(
    reply,
    404,
    'NotFound',
    `The requested path '${(req.url.split('?')[0] ?? '').replace(/^\/powerplatform/, '')}' is not served by the emulator.`,
  );
}
