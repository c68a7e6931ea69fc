/**
 * The audit feed behind the emulated Office 365 Management Activity API (`/manage`) and Power BI activity events
 * (`/powerbi`): per-tenant subscriptions, deterministic records in content blobs over the emulated clock, injected
 * records, and the ground truth a test compares a collection with.
 *
 * Model (all per tenant, deterministic from the feed seed):
 * - Each record kind (`RECORD_KINDS`) is a stream with rate `recordsPerHour × mix[contentType] × kindShare`; record k of
 *   a stream happens at `floor((k + jitter) × interval)` (whole seconds) counted from the Unix epoch, so any window of
 *   time has a fixed, computable set of records and nothing is stored per record.
 * - Time is cut into aggregation windows of `batchMinutes`. The records of one content type in a window, followed by
 *   the previous window's records picked for duplication (`duplicateShare`), are cut into blobs of at most `blobSize`
 *   records. Each blob's `contentCreated` is the window end plus a per-blob delay in [`minDelayMinutes`,
 *   `maxDelayMinutes`]; `contentExpiration` is 7 days later. A blob is listed once the emulated clock reaches its
 *   `contentCreated` and answers AF20051 once it passes its expiration.
 * - Injected records (`addRecords`) form extra blobs with the `contentCreated` the test chose.
 */
import {
  buildCatalog,
  burstShareTarget,
  componentRecordSubject,
  CONTENT_TYPES,
  creationTime,
  Draw,
  feedSeed,
  isContentType,
  RECORD_KINDS,
  recordGuid,
  recordHash,
  recordUnit,
  renderRecordJson,
  requirementMet,
  type AuditCatalog,
  type ContentType,
  type KindSpec,
  type RecordKind,
} from './auditrecords.ts';
import { parseUtc, type EmulatedClock } from './clock.ts';
import type { Tenant, TenantStore } from './tenant.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Content expires this long after `contentCreated` (reference §6: 7 days). */
export const CONTENT_RETENTION_MS = 7 * DAY;
const STREAM_SLOTS = 16;

/** Settings of one tenant's audit feed (`EmulatorControl.configureFeed`). */
export interface FeedSettings {
  /** Seed of every generated value. Default: the tenant id. */
  seed: number | string;
  /** Generated records per hour over all content types. @default 120 */
  recordsPerHour: number;
  /** Share of each content type (normalised; 0 = none). @default General 0.40, Exchange 0.25, SharePoint 0.25, AAD 0.06, DLP 0.04 */
  mix: Record<ContentType, number>;
  /** Weight of record kinds within their content type (normalised per content type; see `RECORD_KINDS` defaults). */
  kindMix: Record<RecordKind, number>;
  /** Aggregation window, whole minutes ≥ 1. @default 10 */
  batchMinutes: number;
  /** Least delay from a window's end to its blobs' `contentCreated`, minutes. @default 30 */
  minDelayMinutes: number;
  /** Greatest such delay, minutes (≥ min). @default 90 */
  maxDelayMinutes: number;
  /** Most records in one blob (K). @default 200 */
  blobSize: number;
  /** Share of records delivered a second time, in a blob of the next window (duplicates by design). @default 0.02 */
  duplicateShare: number;
  /** Most content items in one `/subscriptions/content` page (N); more → `NextPageUri`. @default 200 */
  pageSize: number;
  /** Content types the tenant is not provisioned for (e.g. `DLP.All` without a DLP licence): `start` answers AF20012. */
  unavailableContentTypes: ContentType[];
  /** ISO instant before which no generated record exists (null = unbounded). @default null */
  since: string | null;
  /** Code of window errors (> 24 h apart, start > 7 days back, one bound only): observed live `AF20055` or the documented `AF20030`. @default 'AF20055' */
  windowErrorCode: 'AF20055' | 'AF20030';
  /** API version segment of `NextPageUri`: `v1.0`, or `v1` as the reference's pagination sample shows. Both are served. @default 'v1.0' */
  nextPageUriVersion: 'v1.0' | 'v1';
}

/** Default feed settings (the seed defaults to the tenant id). */
export const DEFAULT_FEED_SETTINGS: Readonly<Omit<FeedSettings, 'seed'>> = {
  recordsPerHour: 120,
  mix: { 'Audit.General': 0.4, 'Audit.Exchange': 0.25, 'Audit.SharePoint': 0.25, 'Audit.AzureActiveDirectory': 0.06, 'DLP.All': 0.04 },
  kindMix: Object.fromEntries(RECORD_KINDS.map((k) => [k.kind, k.weight])) as Record<RecordKind, number>,
  batchMinutes: 10,
  minDelayMinutes: 30,
  maxDelayMinutes: 90,
  blobSize: 200,
  duplicateShare: 0.02,
  pageSize: 200,
  unavailableContentTypes: [],
  since: null,
  windowErrorCode: 'AF20055',
  nextPageUriVersion: 'v1.0',
};

/** A change to `FeedSettings`: any subset; `mix` and `kindMix` are merged key by key. */
export type FeedSettingsPatch = Partial<Omit<FeedSettings, 'mix' | 'kindMix'>> & {
  mix?: Partial<Record<ContentType, number>>;
  kindMix?: Partial<Record<RecordKind, number>>;
};

/** A webhook as the subscription API echoes it (the emulator stores it; it sends no notifications). */
export interface FeedWebhook {
  status: 'enabled';
  address: string;
  authId: string | null;
  expiration: string | null;
}

/** One subscription as `/subscriptions/list` answers it. */
export interface FeedSubscription {
  contentType: ContentType;
  status: 'enabled' | 'disabled';
  webhook: FeedWebhook | null;
}

/** One available content blob (times in epoch ms). */
export interface FeedBlob {
  contentType: ContentType;
  contentId: string;
  contentCreated: number;
  contentExpiration: number;
}

/** Outcome of fetching a blob by content id. */
export type BlobLookup =
  | {
      status: 'ok';
      blob: FeedBlob;
      json: string;
      records: number;
      /** The text is pure ASCII (send it as Latin-1 bytes). */ ascii: boolean;
      /** The body, when pre-rendered (`prerender`). */ bytes?: Buffer;
    }
  | { status: 'expired'; blob: FeedBlob }
  | { status: 'notFound' }
  | { status: 'invalid' };

/** What `addRecords` created: one blob per `blobSize` records. */
export interface AddedContent {
  contentType: ContentType;
  contentId: string;
  contentCreated: string;
  contentExpiration: string;
  /** Ids of the records in the blob (generated for records without `Id`). */
  ids: string[];
}

/** Options of `groundTruth`. */
export interface AuditGroundTruthOptions {
  /** Window start (ISO, inclusive). */
  from: string;
  /** Window end (ISO, exclusive). */
  to: string;
  /**
   * `contentCreated` (default): blobs created in [from, to), what a collector listing that window must fetch;
   * `creationTime`: records whose CreationTime is in [from, to), wherever their blobs are.
   */
  basis?: 'contentCreated' | 'creationTime';
  /** Include the record Ids (default true; pass false for very large windows). */
  includeIds?: boolean;
  /**
   * Also compute `activity`, the facts about users' activity across records (renders every available generated
   * record of the window: slower, for windows of tens of thousands of records). Default false.
   */
  activity?: boolean;
}

/**
 * What users did across the available unique generated records of a window (`groundTruth` with `activity: true`): the
 * facts the rules over many records count, taken from the records as served. A record's user is its `UserId` (case
 * ignored); its client address the first of `ClientIP`, `ClientIPAddress` (Exchange), `ActorIpAddress` (Azure AD) and
 * `PropertyCollection` `enduser.ip_address` (Power Platform) that is set (Management Activity common, Exchange and Azure AD
 * schemas; Power Apps activity logs). Times are the records' `CreationTime`.
 */
export interface ActivityTruth {
  /**
   * Flows (`ObjectId`) created or edited by `flow.externalHttp` records: each lists the HTTP connector, which calls any
   * URL. The records name no URL and the flows are not the tenant's collected ones (EMULATOR: the feed draws flow ids of
   * its own), so the host of each flow is unknown: one (flow, outside host) pair per flow.
   */
  externalHttpFlows: number;
  /**
   * `Disable account.` / `Delete user.` records whose user (`ObjectId`, the UPN) created, edited or deleted a flow
   * (RecordType 30 `CreateFlow`/`EditFlow`/`DeleteFlow`, by `UserId`) within 7 days before or after, in the window.
   */
  departuresWithFlowActivity: number;
  /**
   * Copilot interaction volume spikes (`copilot.volumeSpike` bursts) the user's history makes unusual: bursts in which
   * an hour starting at one of the user's `CopilotInteraction` records (from an hour before the burst's first available
   * record to its last) holds at least max(30, ⌈10 × n / h⌉) of the user's interactions, where n is the user's
   * interactions in the 7 days before the hour preceding that hour and h the hours from the first interaction of anyone
   * in that span to its end (at least 1). Hours without such history never spike. One per user and UTC day (of the
   * burst's last available record). Not modelled: a reader that holds only the first 10,000 interactions of the span.
   */
  copilotSpikes: number;
  /** `copilot.volumeSpike` bursts with an available record none of whose hours has such history (they cannot alert). */
  copilotSpikesWithoutHistory: number;
  /**
   * (user, client address) pairs of `CopilotInteraction` records (RecordType 261) whose address no earlier record of
   * the user (any RecordType, strictly earlier `CreationTime`) came from, while some earlier record of the user came
   * from another address.
   */
  copilotNewIps: number;
}

/** Ground truth of one content type in a window. */
export interface ContentTypeTruth {
  /** Unique Ids of the available records (absent with `includeIds: false`). */
  ids?: string[];
  /** Unique records a complete collection stores (available content). */
  unique: number;
  /** Records delivered in available blobs, duplicates included. */
  records: number;
  /** `records - unique`. */
  duplicates: number;
  /** Available blobs (listed, not expired). */
  blobs: number;
  /** Blobs already expired on the emulated clock, and the unique records found only in them (lost data). */
  expired: { blobs: number; unique: number };
  /** Blobs not yet created on the emulated clock, and the unique records found only in them. */
  pending: { blobs: number; unique: number };
}

/** What `groundTruth` answers. */
export interface AuditGroundTruth {
  tenantId: string;
  from: string;
  to: string;
  /** The emulated clock when computed. */
  now: string;
  basis: 'contentCreated' | 'creationTime';
  contentTypes: Record<ContentType, ContentTypeTruth>;
  /** Over available unique records of all content types. */
  total: { unique: number; records: number; duplicates: number; expiredUnique: number; pendingUnique: number };
  /** Available unique records per RecordType (as a string key). */
  byRecordType: Record<string, number>;
  /** Available unique records per Operation. */
  byOperation: Record<string, number>;
  /** Available unique generated records per notable scenario (`agent.authNone`, `copilot.guestLabelled`, …). */
  scenarios: Record<string, number>;
  /**
   * Agent component records (`BotComponentCreate`/`Update`) per scenario, over the available unique generated ones:
   * `records`; `readable`, those about a component the tenant's connector app can read (`FeedComponent.readable`:
   * a collection holds it); `readableComponents`, the distinct such components; `agentUserHours`, the distinct
   * (agent, user, UTC hour) groups of the records.
   */
  componentRecords: Record<string, { records: number; readable: number; readableComponents: number; agentUserHours: number }>;
  /**
   * Bursts (`RecordVariant.burst`) per scenario, or per burst group: `whole`, the bursts every record of which is
   * available (none cut by the window's edges, nor pending, nor expired); for bursts of shares to guests,
   * `guestsInvited`, those whole bursts in which every guest was invited (an available `entra.guestInvited` record of
   * the window) at or before the share.
   */
  bursts: Record<string, { whole: number; guestsInvited?: number }>;
  /** Available unique generated Copilot Studio agent records (RecordType 256, `Bot*` operations) per agent (bot id). */
  agentRecords: Record<string, number>;
  /** With `activity: true`: what users did across records (see {@link ActivityTruth}). */
  activity?: ActivityTruth;
}

/** Power BI tenant settings that the activity-events API depends on (`EmulatorControl.setPowerBiSettings`). */
export interface PowerBiSettings {
  /**
   * Tenant setting "Service principals can access read-only admin APIs" (for the app's security group). Off: app
   * tokens get 401 `PowerBINotAuthorizedException`. @default true
   */
  servicePrincipalsCanUseReadOnlyAdminApis: boolean;
  /**
   * Refuse app tokens that carry Power BI application roles (Tenant.Read.All / Tenant.ReadWrite.All) with 401
   * `PowerBINotAuthorizedException`, as Microsoft documents: a service principal calling the read-only admin APIs "must
   * not have any admin-consent required permissions for Power BI" (learn.microsoft.com/fabric/admin/
   * enable-service-principal-admin-apis; the admin API pages: "Must not be present when authentication via a service
   * principal is used"). No distinct error is documented; refused callers report the 401 body of
   * `powerBiNotAuthorized()` in powerbi.ts (MicrosoftDocs/powerbi-docs #2956, #3262). Off: such apps are served like the others
   * (what some tenants report). @default true
   */
  rejectServicePrincipalsWithPowerBiRoles: boolean;
  /** Most events per response. @default 5000 */
  pageSize: number;
  /** How far back `startDateTime` may be, days. @default 30 */
  historyDays: number;
}

/** Default Power BI settings. */
export const DEFAULT_POWER_BI_SETTINGS: Readonly<PowerBiSettings> = {
  servicePrincipalsCanUseReadOnlyAdminApis: true,
  rejectServicePrincipalsWithPowerBiRoles: true,
  pageSize: 5000,
  historyDays: 30,
};

/** Counts of Management Activity requests by `PublisherIdentifier`. */
export interface PublisherStats {
  /** Every request under `/manage`. */
  total: number;
  /** Requests without a `PublisherIdentifier` query parameter. */
  withoutPublisherIdentifier: number;
  /** Requests per PublisherIdentifier value. */
  byPublisher: Record<string, number>;
}

interface Stream {
  index: number;
  spec: KindSpec;
  ctIndex: number;
  intervalMs: number;
  /** Cumulative normalised weights of the variants (effective, after `requires`). */
  cum: Float64Array;
  /** Effective variant index for each raw pick (fallbacks applied). */
  variantMap: Int32Array;
  /** Variants placed by record index (`RecordVariant.burst`), checked before the weighted pick. */
  bursts: { variant: number; period: number; offset: number; size: number; group?: string }[];
}

interface WindowInfo {
  /** Own records: [stream, firstK, endK) per stream with records. */
  ranges: [number, number, number][];
  ownTotal: number;
  /** Refs (k × 16 + stream) of the previous window's records delivered again here. */
  dups: number[];
  total: number;
  chunks: number;
}

interface InjectedBlob {
  blob: FeedBlob;
  records: Record<string, unknown>[];
  ids: string[];
  json: string;
  ascii: boolean;
}

const CT_SLUG: Record<ContentType, [string, string]> = {
  'Audit.AzureActiveDirectory': ['audit_azureactivedirectory', 'Audit_AzureActiveDirectory'],
  'Audit.Exchange': ['audit_exchange', 'Audit_Exchange'],
  'Audit.SharePoint': ['audit_sharepoint', 'Audit_SharePoint'],
  'Audit.General': ['audit_general', 'Audit_General'],
  'DLP.All': ['dlp_all', 'DLP_All'],
};

/** Index of the first element of ascending `xs` that is ≥ `x` (`xs.length` when none is). */
function firstAtLeast(xs: readonly number[], x: number): number {
  let lo = 0;
  for (let hi = xs.length; lo < hi;) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `YYYYMMDDHHmmssfff` (UTC): the timestamp prefix of content ids. */
function stamp17(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T.Z]/g, '');
}

function parseStamp17(s: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})$/.exec(s);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]));
  return Number.isNaN(ms) ? null : ms;
}

const CONTENT_ID = /^(\d{17})(\d{6})\$(\d{17})(\d{6})\$([a-z_]+)\$([A-Za-z_]+)\$emu(\d{4}|inj)$/;

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function checkNumber(name: string, v: unknown, min: number, max = Infinity, integer = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw new RangeError(`${name} must be ${integer ? 'an integer' : 'a number'} in [${min}, ${max}], got ${String(v)}`);
  }
  return v;
}

/** Validates and merges a settings patch; throws RangeError on a bad value. */
function mergeFeedSettings(current: FeedSettings, patch: FeedSettingsPatch): FeedSettings {
  const next: FeedSettings = clone(current);
  if (patch.seed !== undefined) {
    if (typeof patch.seed !== 'number' && typeof patch.seed !== 'string') throw new RangeError('seed must be a number or a string');
    next.seed = patch.seed;
  }
  if (patch.recordsPerHour !== undefined) next.recordsPerHour = checkNumber('recordsPerHour', patch.recordsPerHour, 0, 1e9);
  if (patch.mix !== undefined) {
    for (const [k, v] of Object.entries(patch.mix)) {
      if (!isContentType(k)) throw new RangeError(`mix: unknown content type ${k}`);
      next.mix[k] = checkNumber(`mix.${k}`, v, 0);
    }
  }
  if (patch.kindMix !== undefined) {
    for (const [k, v] of Object.entries(patch.kindMix)) {
      if (!RECORD_KINDS.some((s) => s.kind === k)) throw new RangeError(`kindMix: unknown record kind ${k}`);
      next.kindMix[k as RecordKind] = checkNumber(`kindMix.${k}`, v, 0);
    }
  }
  if (patch.batchMinutes !== undefined) next.batchMinutes = checkNumber('batchMinutes', patch.batchMinutes, 1, 1440, true);
  if (patch.minDelayMinutes !== undefined) next.minDelayMinutes = checkNumber('minDelayMinutes', patch.minDelayMinutes, 0, 7 * 1440);
  if (patch.maxDelayMinutes !== undefined) next.maxDelayMinutes = checkNumber('maxDelayMinutes', patch.maxDelayMinutes, 0, 7 * 1440);
  if (next.maxDelayMinutes < next.minDelayMinutes)
    throw new RangeError(`maxDelayMinutes (${next.maxDelayMinutes}) < minDelayMinutes (${next.minDelayMinutes})`);
  if (patch.blobSize !== undefined) next.blobSize = checkNumber('blobSize', patch.blobSize, 1, 1_000_000, true);
  if (patch.duplicateShare !== undefined) next.duplicateShare = checkNumber('duplicateShare', patch.duplicateShare, 0, 1);
  if (patch.pageSize !== undefined) next.pageSize = checkNumber('pageSize', patch.pageSize, 1, 1_000_000, true);
  if (patch.unavailableContentTypes !== undefined) {
    if (!Array.isArray(patch.unavailableContentTypes) || patch.unavailableContentTypes.some((c) => !isContentType(c))) {
      throw new RangeError(`unavailableContentTypes must list content types (${CONTENT_TYPES.join(', ')})`);
    }
    next.unavailableContentTypes = [...new Set(patch.unavailableContentTypes)];
  }
  if (patch.since !== undefined) {
    if (patch.since !== null && parseUtc(patch.since) === null) throw new RangeError(`since is not an ISO instant: ${String(patch.since)}`);
    next.since = patch.since;
  }
  if (patch.windowErrorCode !== undefined) {
    if (patch.windowErrorCode !== 'AF20055' && patch.windowErrorCode !== 'AF20030') throw new RangeError("windowErrorCode must be 'AF20055' or 'AF20030'");
    next.windowErrorCode = patch.windowErrorCode;
  }
  if (patch.nextPageUriVersion !== undefined) {
    if (patch.nextPageUriVersion !== 'v1.0' && patch.nextPageUriVersion !== 'v1') throw new RangeError("nextPageUriVersion must be 'v1.0' or 'v1'");
    next.nextPageUriVersion = patch.nextPageUriVersion;
  }
  return next;
}

/** The audit feed of one tenant. Create through `FeedStore.feed()`. */
export class TenantFeed {
  readonly tenantId: string;
  #tenant: Tenant;
  readonly #clock: EmulatedClock;
  #settings: FeedSettings;
  #seed = 0;
  #catalog: AuditCatalog | null = null;
  #streams: Stream[] = [];
  #windows = new Map<string, WindowInfo>();
  readonly #subscriptions = new Map<ContentType, FeedSubscription>();
  readonly #injected = new Map<string, InjectedBlob>();
  #injectSeq = 0;
  #sinceMs = -Infinity;

  /** @param tenant the served tenant; @param clock the emulated clock; @param settings initial settings patch. */
  constructor(tenant: Tenant, clock: EmulatedClock, settings: FeedSettingsPatch = {}) {
    this.tenantId = tenant.id;
    this.#tenant = tenant;
    this.#clock = clock;
    this.#settings = mergeFeedSettings({ ...clone(DEFAULT_FEED_SETTINGS), seed: tenant.id }, settings);
    this.#rebuild();
  }

  /** A copy of the settings in force. */
  settings(): FeedSettings {
    return clone(this.#settings);
  }

  /**
   * Applies a settings patch (validated; RangeError on a bad value), takes a fresh snapshot of the tenant's users and
   * objects. Content ids listed before a change may stop resolving (AF20050).
   */
  configure(patch: FeedSettingsPatch): FeedSettings {
    this.#settings = mergeFeedSettings(this.#settings, patch);
    this.#prerendered.clear();
    this.#rebuild();
    return this.settings();
  }

  /** Follows a tenant object replaced in the store (same id): re-snapshots the catalogue. */
  retarget(tenant: Tenant): void {
    if (tenant === this.#tenant) return;
    this.#tenant = tenant;
    this.#rebuild();
  }

  /** The catalogue records are drawn from (users, IPs, sites, agents…). */
  catalog(): AuditCatalog {
    if (!this.#catalog) this.#catalog = buildCatalog(this.#tenant, this.#settings.seed);
    return this.#catalog;
  }

  #rebuild(): void {
    const s = this.#settings;
    this.#seed = feedSeed(s.seed);
    this.#catalog = buildCatalog(this.#tenant, s.seed);
    this.#sinceMs = s.since === null ? -Infinity : (parseUtc(s.since) as number);
    const c = this.#catalog;
    const mixTotal = CONTENT_TYPES.reduce((n, ct) => n + (s.mix[ct] ?? 0), 0);
    this.#streams = [];
    RECORD_KINDS.forEach((spec, index) => {
      const ctIndex = CONTENT_TYPES.indexOf(spec.contentType);
      const siblings = RECORD_KINDS.filter((k) => k.contentType === spec.contentType);
      const kindTotal = siblings.reduce((n, k) => n + (s.kindMix[k.kind] ?? 0), 0);
      const share = mixTotal > 0 && kindTotal > 0 ? ((s.mix[spec.contentType] ?? 0) / mixTotal) * ((s.kindMix[spec.kind] ?? 0) / kindTotal) : 0;
      const rate = s.recordsPerHour * share;
      const weights = spec.variants.map((v) => v.weight);
      const variantMap = new Int32Array(spec.variants.length).map((_, i) => i);
      spec.variants.forEach((v, i) => {
        if (!requirementMet(c, v.requires)) variantMap[i] = v.fallback ?? 0;
      });
      const total = weights.reduce((a, b) => a + b, 0);
      const cum = new Float64Array(weights.length);
      let acc = 0;
      weights.forEach((w, i) => {
        acc += w / total;
        cum[i] = acc;
      });
      cum[cum.length - 1] = 1;
      const bursts = spec.variants.flatMap((v, variant) => (v.burst ? [{ variant, ...v.burst }] : []));
      this.#streams.push({ index, spec, ctIndex, intervalMs: rate > 0 ? HOUR / rate : Infinity, cum, variantMap, bursts });
    });
    this.#windows = new Map();
  }

  // --- record identity ---------------------------------------------------------------------------------------------

  #time(st: Stream, k: number): number {
    return Math.floor(((k + recordUnit(this.#seed, st.index, k, 1)) * st.intervalMs) / 1000) * 1000;
  }

  /** First record index of a stream whose time is ≥ a (records begin at `since`). */
  #firstAtOrAfter(st: Stream, a: number): number {
    const from = Math.max(a, this.#sinceMs, 0);
    if (from <= 0) return 0;
    let k = Math.max(0, Math.floor(from / st.intervalMs) - 1);
    while (this.#time(st, k) < from) k++;
    while (k > 0 && this.#time(st, k - 1) >= from) k--;
    return k;
  }

  #variant(st: Stream, k: number): number {
    for (const b of st.bursts) {
      const r = k % b.period;
      if (r >= b.offset && r < b.offset + b.size) return b.variant;
    }
    const u = recordUnit(this.#seed, st.index, k, 3);
    const cum = st.cum;
    let i = 0;
    while (i < cum.length - 1 && u >= (cum[i] as number)) i++;
    return st.variantMap[i] as number;
  }

  #isDup(st: Stream, k: number): boolean {
    const share = this.#settings.duplicateShare;
    return share > 0 && recordUnit(this.#seed, st.index, k, 2) < share;
  }

  /** The JSON text of a generated record (ref = index × 16 + stream). */
  #renderRef(ref: number): string {
    const s = ref % STREAM_SLOTS;
    const k = (ref - s) / STREAM_SLOTS;
    const st = this.#streams[s] as Stream;
    const variant = this.#variant(st, k);
    const burst = st.bursts.find((b) => b.variant === variant);
    const core = {
      id: recordGuid(this.#seed, s, k),
      time: this.#time(st, k),
      variant,
      ...(burst ? { burst: { n: Math.floor(k / burst.period), i: (k % burst.period) - burst.offset } } : {}),
    };
    return renderRecordJson(st.spec, this.catalog(), core, new Draw(recordHash(this.#seed, s, k, 0)));
  }

  #describeRef(ref: number): { id: string; time: number; recordType: number; operation: string; scenario: string | undefined } {
    const s = ref % STREAM_SLOTS;
    const k = (ref - s) / STREAM_SLOTS;
    const st = this.#streams[s] as Stream;
    const v = st.spec.variants[this.#variant(st, k)] as KindSpec['variants'][number];
    return { id: recordGuid(this.#seed, s, k), time: this.#time(st, k), recordType: v.recordType, operation: v.operation, scenario: v.scenario };
  }

  /** The component and user of a component record (`componentRecordSubject`), null for other records. */
  #subject(st: Stream, k: number) {
    const variant = this.#variant(st, k);
    const burst = st.bursts.find((b) => b.variant === variant);
    const v = st.spec.variants[variant] as KindSpec['variants'][number];
    return componentRecordSubject(
      this.catalog(),
      v,
      new Draw(recordHash(this.#seed, st.index, k, 0)),
      burst ? { n: Math.floor(k / burst.period), i: (k % burst.period) - burst.offset } : undefined,
    );
  }

  /**
   * When the feed's component records say each of the tenant's agent components was last created and changed: the
   * CreationTime (epoch ms) of the latest `BotComponentCreate` and of the latest `BotComponentCreate`/`Update` record
   * about it that has happened on the emulated clock, over the records that can still be listed (the last 7 days,
   * not before `since`). The Dataverse emulator serves a component's `createdon`/`modifiedon` no earlier than these,
   * so a record and the component it names agree (EMULATOR: a create record about an existing id stands for the
   * component removed and added again, as a solution import that keeps its id does).
   */
  componentChanges(): Map<string, { created: number | null; modified: number }> {
    const out = new Map<string, { created: number | null; modified: number }>();
    const st = this.#streams.find((x) => x.spec.kind === 'powerPlatformAdmin');
    if (!st || !Number.isFinite(st.intervalMs) || this.catalog().components.length === 0) return out;
    const now = this.#clock.now();
    const a = this.#firstAtOrAfter(st, now - CONTENT_RETENTION_MS);
    const b = this.#firstAtOrAfter(st, now + 1);
    for (let k = a; k < b; k++) {
      const subject = this.#subject(st, k);
      if (!subject?.component) continue;
      const t = this.#time(st, k);
      const create = (st.spec.variants[this.#variant(st, k)] as KindSpec['variants'][number]).operation === 'BotComponentCreate';
      const prev = out.get(subject.component.id);
      out.set(subject.component.id, { created: create ? t : (prev?.created ?? null), modified: t });
    }
    return out;
  }

  // --- windows and blobs -------------------------------------------------------------------------------------------

  #windowMs(): number {
    return this.#settings.batchMinutes * MINUTE;
  }

  #ownRanges(ctIndex: number, w: number): [number, number, number][] {
    const W = this.#windowMs();
    const out: [number, number, number][] = [];
    for (const st of this.#streams) {
      if (st.ctIndex !== ctIndex || !Number.isFinite(st.intervalMs)) continue;
      const a = this.#firstAtOrAfter(st, w * W);
      const b = this.#firstAtOrAfter(st, (w + 1) * W);
      if (b > a) out.push([st.index, a, b]);
    }
    return out;
  }

  #window(ctIndex: number, w: number): WindowInfo {
    const key = `${ctIndex}|${w}`;
    const hit = this.#windows.get(key);
    if (hit) return hit;
    const ranges = this.#ownRanges(ctIndex, w);
    const ownTotal = ranges.reduce((n, [, a, b]) => n + (b - a), 0);
    const dups: number[] = [];
    if (this.#settings.duplicateShare > 0) {
      for (const [s, a, b] of this.#ownRanges(ctIndex, w - 1)) {
        const st = this.#streams[s] as Stream;
        for (let k = a; k < b; k++) if (this.#isDup(st, k)) dups.push(k * STREAM_SLOTS + s);
      }
    }
    const total = ownTotal + dups.length;
    const info: WindowInfo = { ranges, ownTotal, dups, total, chunks: Math.ceil(total / this.#settings.blobSize) };
    if (this.#windows.size > 200_000) this.#windows.clear();
    this.#windows.set(key, info);
    return info;
  }

  #created(ctIndex: number, w: number, c: number): number {
    const s = this.#settings;
    const min = s.minDelayMinutes * MINUTE;
    const span = (s.maxDelayMinutes - s.minDelayMinutes) * MINUTE;
    return (w + 1) * this.#windowMs() + min + Math.floor(recordUnit(this.#seed, 64 + ctIndex, w, 1000 + c) * span);
  }

  #contentId(ct: ContentType, w: number, c: number, created: number): string {
    const [slug, name] = CT_SLUG[ct];
    return `${stamp17(created)}${String(c).padStart(6, '0')}$${stamp17(w * this.#windowMs())}${String(this.#settings.batchMinutes).padStart(6, '0')}$${slug}$${name}$emu${String(CONTENT_TYPES.indexOf(ct) + 1).padStart(4, '0')}`;
  }

  #refsOf(info: WindowInfo, c: number): number[] {
    const K = this.#settings.blobSize;
    const from = c * K;
    const to = Math.min(info.total, from + K);
    const out: number[] = [];
    let p = from;
    let base = 0;
    for (const [s, a, b] of info.ranges) {
      const n = b - a;
      while (p < to && p < base + n) {
        out.push((a + (p - base)) * STREAM_SLOTS + s);
        p++;
      }
      base += n;
    }
    while (p < to) {
      out.push(info.dups[p - info.ownTotal] as number);
      p++;
    }
    return out;
  }

  /** Generated blobs of a content type whose `contentCreated` is in [start, end), any state, sorted by creation. */
  #generatedBlobs(ct: ContentType, start: number, end: number): { blob: FeedBlob; w: number; c: number }[] {
    const ctIndex = CONTENT_TYPES.indexOf(ct);
    const W = this.#windowMs();
    const s = this.#settings;
    const wFrom = Math.floor((start - s.maxDelayMinutes * MINUTE) / W) - 1;
    const wTo = Math.floor((end - s.minDelayMinutes * MINUTE) / W);
    const out: { blob: FeedBlob; w: number; c: number }[] = [];
    const firstWindow = Number.isFinite(this.#sinceMs) ? Math.floor(this.#sinceMs / W) : -Infinity;
    for (let w = Math.max(wFrom, firstWindow, 0); w <= wTo; w++) {
      const info = this.#window(ctIndex, w);
      for (let c = 0; c < info.chunks; c++) {
        const created = this.#created(ctIndex, w, c);
        if (created < start || created >= end) continue;
        out.push({
          blob: { contentType: ct, contentId: this.#contentId(ct, w, c, created), contentCreated: created, contentExpiration: created + CONTENT_RETENTION_MS },
          w,
          c,
        });
      }
    }
    return out;
  }

  #injectedBlobs(ct: ContentType, start: number, end: number): InjectedBlob[] {
    const out: InjectedBlob[] = [];
    for (const b of this.#injected.values()) if (b.blob.contentType === ct && b.blob.contentCreated >= start && b.blob.contentCreated < end) out.push(b);
    return out;
  }

  /**
   * The content a `/subscriptions/content` call lists: blobs with `contentCreated` in [start, end) that exist on the
   * emulated clock (created ≤ now) and have not expired, sorted by `contentCreated` then `contentId`.
   */
  listContent(ct: ContentType, start: number, end: number): FeedBlob[] {
    const now = this.#clock.now();
    const hi = Math.min(end, now + 1);
    if (hi <= start) return [];
    const blobs = [...this.#generatedBlobs(ct, start, hi).map((g) => g.blob), ...this.#injectedBlobs(ct, start, hi).map((b) => b.blob)];
    return blobs
      .filter((b) => b.contentExpiration > now)
      .sort((a, b) => a.contentCreated - b.contentCreated || (a.contentId < b.contentId ? -1 : a.contentId > b.contentId ? 1 : 0));
  }

  #prerendered = new Map<string, { bytes: Buffer; records: number }>();

  /**
   * Renders every blob listed now (all content types, the last 7 days) once and keeps the bodies as bytes, so serving
   * them costs no rendering: what the real service does (content blobs are stored files), for benchmarks that measure
   * the collector rather than the emulator. `from`/`to` (epoch ms) narrow it to blobs created in [from, to). Returns
   * the blobs and bytes kept. Reconfiguring the feed drops them.
   */
  prerender(from?: number, to?: number): { blobs: number; bytes: number } {
    const now = this.#clock.now();
    let bytes = 0;
    for (const ct of CONTENT_TYPES) {
      for (const b of this.listContent(ct, from ?? now - CONTENT_RETENTION_MS, to ?? now + 1)) {
        const found = this.blob(b.contentId);
        if (found.status !== 'ok' || found.bytes) continue;
        const body = Buffer.from(found.json, found.ascii ? 'latin1' : 'utf8');
        this.#prerendered.set(b.contentId, { bytes: body, records: found.records });
        bytes += body.length;
      }
    }
    return { blobs: this.#prerendered.size, bytes };
  }

  /** The content type a content id names, or null when the id is malformed. */
  contentTypeOf(contentId: string): ContentType | null {
    const m = CONTENT_ID.exec(contentId);
    if (!m) return null;
    const ct = CONTENT_TYPES.find((t) => CT_SLUG[t][0] === m[5] && CT_SLUG[t][1] === m[6]);
    return ct ?? null;
  }

  /**
   * Resolves a content id on the emulated clock: `ok` with the JSON array of its records, `expired` once
   * `contentExpiration` has passed, `notFound` when it does not (yet) exist, `invalid` when malformed.
   */
  blob(contentId: string): BlobLookup {
    const m = CONTENT_ID.exec(contentId);
    if (!m) return { status: 'invalid' };
    const now = this.#clock.now();
    const injected = this.#injected.get(contentId);
    if (m[7] === 'inj') {
      if (!injected || injected.blob.contentCreated > now) return { status: 'notFound' };
      if (injected.blob.contentExpiration <= now) return { status: 'expired', blob: injected.blob };
      return { status: 'ok', blob: injected.blob, json: injected.json, records: injected.records.length, ascii: injected.ascii };
    }
    const ct = this.contentTypeOf(contentId);
    const created = parseStamp17(m[1] as string);
    const windowStart = parseStamp17(m[3] as string);
    if (!ct || created === null || windowStart === null) return { status: 'invalid' };
    if (Number(m[4]) !== this.#settings.batchMinutes || windowStart % this.#windowMs() !== 0) return { status: 'notFound' };
    const ctIndex = CONTENT_TYPES.indexOf(ct);
    const w = windowStart / this.#windowMs();
    const c = Number(m[2]);
    if (w < 0 || this.#created(ctIndex, w, c) !== created) return { status: 'notFound' };
    const info = this.#window(ctIndex, w);
    if (c >= info.chunks || created > now) return { status: 'notFound' };
    const blob: FeedBlob = { contentType: ct, contentId, contentCreated: created, contentExpiration: created + CONTENT_RETENTION_MS };
    if (blob.contentExpiration <= now) return { status: 'expired', blob };
    const kept = this.#prerendered.get(contentId);
    if (kept) return { status: 'ok', blob, json: '', records: kept.records, ascii: true, bytes: kept.bytes };
    const refs = this.#refsOf(info, c);
    // Rendering is deterministic and cheap; blobs are not cached (a cache of 100-KB strings costs more in GC than a
    // re-render of the rare blob fetched twice).
    const parts: string[] = new Array<string>(refs.length);
    for (let i = 0; i < refs.length; i++) parts[i] = this.#renderRef(refs[i] as number);
    return { status: 'ok', blob, json: `[${parts.join(',')}]`, records: refs.length, ascii: this.catalog().ascii };
  }

  // --- subscriptions -------------------------------------------------------------------------------------------------

  /** Subscriptions that were ever started (enabled or stopped), in content-type order. */
  subscriptions(): FeedSubscription[] {
    return CONTENT_TYPES.filter((ct) => this.#subscriptions.has(ct)).map((ct) => clone(this.#subscriptions.get(ct) as FeedSubscription));
  }

  /** The subscription of a content type, or null when never started. */
  subscription(ct: ContentType): FeedSubscription | null {
    const s = this.#subscriptions.get(ct);
    return s ? clone(s) : null;
  }

  /**
   * Starts (or re-enables) a subscription. `already` when it is enabled and nothing changes (the API's AF20024);
   * `unavailable` when the content type is in `unavailableContentTypes`.
   */
  start(
    ct: ContentType,
    webhook: FeedWebhook | null = null,
  ): { outcome: 'started' | 'updated' | 'already' | 'unavailable'; subscription: FeedSubscription | null } {
    if (this.#settings.unavailableContentTypes.includes(ct)) return { outcome: 'unavailable', subscription: null };
    const current = this.#subscriptions.get(ct);
    if (current && current.status === 'enabled') {
      const same = JSON.stringify(current.webhook) === JSON.stringify(webhook);
      if (same || webhook === null) return { outcome: 'already', subscription: clone(current) };
      current.webhook = webhook;
      return { outcome: 'updated', subscription: clone(current) };
    }
    const sub: FeedSubscription = { contentType: ct, status: 'enabled', webhook };
    this.#subscriptions.set(ct, sub);
    return { outcome: 'started', subscription: clone(sub) };
  }

  /** Stops a subscription (status `disabled`). False when it was never started. */
  stop(ct: ContentType): boolean {
    const current = this.#subscriptions.get(ct);
    if (!current) return false;
    current.status = 'disabled';
    return true;
  }

  /** Whether a content type's subscription is enabled. */
  enabled(ct: ContentType): boolean {
    return this.#subscriptions.get(ct)?.status === 'enabled';
  }

  /** Whether the tenant is provisioned for a content type (see `unavailableContentTypes`). */
  available(ct: ContentType): boolean {
    return !this.#settings.unavailableContentTypes.includes(ct);
  }

  /** Forgets every subscription (test setup). */
  resetSubscriptions(): void {
    this.#subscriptions.clear();
  }

  // --- injected records ----------------------------------------------------------------------------------------------

  /**
   * Plants records in new blobs of a content type with the given `contentCreated` (default: the emulated now), at most
   * `blobSize` records per blob. Missing `Id` (a GUID), `OrganizationId` (the tenant) and `CreationTime` (45 minutes
   * before `contentCreated`) are filled in; everything else is served exactly as given.
   */
  addRecords(ct: ContentType, records: Record<string, unknown>[], options: { contentCreated?: string } = {}): AddedContent[] {
    const created = options.contentCreated === undefined ? this.#clock.now() : parseUtc(options.contentCreated);
    if (created === null) throw new RangeError(`contentCreated is not an ISO instant: ${String(options.contentCreated)}`);
    if (!Array.isArray(records) || records.some((r) => typeof r !== 'object' || r === null || Array.isArray(r)))
      throw new RangeError('records must be an array of objects');
    const draw = new Draw(recordHash(this.#seed, 15, this.#injectSeq + 1, 7));
    const filled = records.map((r) => ({
      ...(typeof r.CreationTime === 'string' ? {} : { CreationTime: creationTime(Math.floor((created - 45 * MINUTE) / 1000) * 1000) }),
      ...(typeof r.Id === 'string' ? {} : { Id: draw.guid() }),
      ...(typeof r.OrganizationId === 'string' ? {} : { OrganizationId: this.tenantId }),
      ...clone(r),
    }));
    const out: AddedContent[] = [];
    const K = this.#settings.blobSize;
    for (let i = 0; i < Math.max(1, filled.length); i += K) {
      const slice = filled.slice(i, i + K);
      const seq = ++this.#injectSeq;
      const [slug, name] = CT_SLUG[ct];
      const contentId = `${stamp17(created)}${String(seq % 1_000_000).padStart(6, '0')}$${stamp17(created)}000000$${slug}$${name}$emuinj`;
      const blob: FeedBlob = { contentType: ct, contentId, contentCreated: created, contentExpiration: created + CONTENT_RETENTION_MS };
      const ids = slice.map((r) => String(r.Id));
      const json = JSON.stringify(slice);
      this.#injected.set(contentId, { blob, records: slice, ids, json, ascii: !/[^ -\u007f]/.test(json) });
      out.push({
        contentType: ct,
        contentId,
        contentCreated: new Date(created).toISOString(),
        contentExpiration: new Date(blob.contentExpiration).toISOString(),
        ids,
      });
    }
    return out;
  }

  // --- ground truth --------------------------------------------------------------------------------------------------

  /**
   * The records a complete, correct collection of a window must hold, on the emulated clock: per content type the
   * unique Ids whose content is available (listed and not expired), how many were delivered (duplicates included), and
   * what is lost (only in expired blobs) or not yet there (only in blobs created after now); plus counts per
   * RecordType, Operation and scenario over the available unique records.
   */
  groundTruth(options: AuditGroundTruthOptions): AuditGroundTruth {
    const from = parseUtc(options.from);
    const to = parseUtc(options.to);
    if (from === null || to === null) throw new RangeError('from and to must be ISO instants');
    if (to < from) throw new RangeError('to must not be before from');
    const basis = options.basis ?? 'contentCreated';
    const includeIds = options.includeIds ?? true;
    const now = this.#clock.now();
    const W = this.#windowMs();
    const AVAILABLE = 3;
    const EXPIRED = 2;
    const PENDING = 1;
    const stateOf = (b: FeedBlob): number => (b.contentCreated > now ? PENDING : b.contentExpiration <= now ? EXPIRED : AVAILABLE);
    const byRecordType: Record<string, number> = {};
    const byOperation: Record<string, number> = {};
    const scenarios: Record<string, number> = {};
    const total = { unique: 0, records: 0, duplicates: 0, expiredUnique: 0, pendingUnique: 0 };
    const contentTypes = {} as Record<ContentType, ContentTypeTruth>;
    // Refs of the available unique generated records (all content types: ref = k × 16 + stream, streams are unique).
    const available = new Set<number>();
    for (const ct of CONTENT_TYPES) {
      const ctIndex = CONTENT_TYPES.indexOf(ct);
      const generated = new Map<number, number>();
      const planted = new Map<string, { state: number; record: Record<string, unknown> }>();
      const truth: ContentTypeTruth = { unique: 0, records: 0, duplicates: 0, blobs: 0, expired: { blobs: 0, unique: 0 }, pending: { blobs: 0, unique: 0 } };
      // Which blobs can hold what the window asks for.
      let genBlobs: { blob: FeedBlob; w: number; c: number }[];
      let injBlobs: InjectedBlob[];
      if (basis === 'contentCreated') {
        genBlobs = this.#generatedBlobs(ct, from, to);
        injBlobs = this.#injectedBlobs(ct, from, to);
      } else {
        genBlobs = [];
        const wFrom = Math.floor(from / W);
        const wTo = Math.floor((to - 1) / W) + 1;
        for (let w = Math.max(0, wFrom); w <= wTo; w++) {
          const info = this.#window(ctIndex, w);
          for (let c = 0; c < info.chunks; c++) {
            const created = this.#created(ctIndex, w, c);
            genBlobs.push({
              blob: {
                contentType: ct,
                contentId: this.#contentId(ct, w, c, created),
                contentCreated: created,
                contentExpiration: created + CONTENT_RETENTION_MS,
              },
              w,
              c,
            });
          }
        }
        injBlobs = this.#injectedBlobs(ct, -Infinity, Infinity);
      }
      const inRange = (t: number): boolean => basis === 'contentCreated' || (t >= from && t < to);
      /** A blob with `counted` records of this window counts as available, expired or pending by its state. */
      const countBlob = (state: number, counted: number) => {
        if (counted === 0) return;
        if (state === AVAILABLE) {
          truth.blobs++;
          truth.records += counted;
        } else if (state === EXPIRED) truth.expired.blobs++;
        else truth.pending.blobs++;
      };
      for (const g of genBlobs) {
        const state = stateOf(g.blob);
        const refs = this.#refsOf(this.#window(ctIndex, g.w), g.c);
        let counted = 0;
        for (const ref of refs) {
          if (basis === 'creationTime') {
            const st = this.#streams[ref % STREAM_SLOTS] as Stream;
            if (!inRange(this.#time(st, (ref - (ref % STREAM_SLOTS)) / STREAM_SLOTS))) continue;
          }
          counted++;
          const prev = generated.get(ref) ?? 0;
          if (state > prev) generated.set(ref, state);
        }
        countBlob(state, counted);
      }
      for (const b of injBlobs) {
        const state = stateOf(b.blob);
        let counted = 0;
        for (const r of b.records) {
          const t = typeof r.CreationTime === 'string' ? parseUtc(r.CreationTime) : null;
          if (basis === 'creationTime' && (t === null || !inRange(t))) continue;
          counted++;
          const id = String(r.Id);
          const prev = planted.get(id);
          if (!prev || state > prev.state) planted.set(id, { state, record: r });
        }
        countBlob(state, counted);
      }
      const ids: string[] = [];
      const count = (recordType: unknown, operation: unknown, scenario: string | undefined): void => {
        const rt = String(recordType);
        byRecordType[rt] = (byRecordType[rt] ?? 0) + 1;
        const op = String(operation);
        byOperation[op] = (byOperation[op] ?? 0) + 1;
        if (scenario) scenarios[scenario] = (scenarios[scenario] ?? 0) + 1;
      };
      for (const [ref, state] of generated) {
        if (state === AVAILABLE) {
          available.add(ref);
          truth.unique++;
          const d = this.#describeRef(ref);
          if (includeIds) ids.push(d.id);
          count(d.recordType, d.operation, d.scenario);
        } else if (state === EXPIRED) truth.expired.unique++;
        else truth.pending.unique++;
      }
      for (const [id, p] of planted) {
        if (p.state === AVAILABLE) {
          truth.unique++;
          if (includeIds) ids.push(id);
          count(p.record.RecordType, p.record.Operation, undefined);
        } else if (p.state === EXPIRED) truth.expired.unique++;
        else truth.pending.unique++;
      }
      truth.duplicates = truth.records - truth.unique;
      if (includeIds) truth.ids = ids;
      contentTypes[ct] = truth;
      total.unique += truth.unique;
      total.records += truth.records;
      total.duplicates += truth.duplicates;
      total.expiredUnique += truth.expired.unique;
      total.pendingUnique += truth.pending.unique;
    }
    const { componentRecords, bursts, agentRecords } = this.#recordGroups(available);
    const activity = options.activity ? { activity: this.#activity(available) } : {};
    return {
      tenantId: this.tenantId,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      now: new Date(now).toISOString(),
      basis,
      contentTypes,
      total,
      byRecordType,
      byOperation,
      scenarios,
      componentRecords,
      bursts,
      agentRecords,
      ...activity,
    };
  }

  /** `activity` of `groundTruth` over the refs of the available unique generated records (each rendered once). */
  #activity(available: Set<number>): ActivityTruth {
    interface Rec {
      t: number;
      user: string | null;
      ip: string | null;
      recordType: number;
      operation: string;
      objectId: string | null;
      scenario: string | undefined;
      /** `stream|burst number` of a burst record. */
      burst: string | null;
    }
    const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
    const recs: Rec[] = [];
    for (const ref of available) {
      const s = ref % STREAM_SLOTS;
      const k = (ref - s) / STREAM_SLOTS;
      const st = this.#streams[s] as Stream;
      const variant = this.#variant(st, k);
      const v = st.spec.variants[variant] as KindSpec['variants'][number];
      const r = JSON.parse(this.#renderRef(ref)) as Record<string, unknown>;
      const props = Array.isArray(r.PropertyCollection) ? (r.PropertyCollection as { Name?: unknown; Value?: unknown }[]) : [];
      const burst = st.bursts.find((b) => b.variant === variant);
      recs.push({
        t: this.#time(st, k),
        user: str(r.UserId)?.toLowerCase() ?? null,
        ip: str(r.ClientIP) ?? str(r.ClientIPAddress) ?? str(r.ActorIpAddress) ?? str(props.find((p) => p.Name === 'enduser.ip_address')?.Value),
        recordType: v.recordType,
        operation: v.operation,
        objectId: str(r.ObjectId),
        scenario: v.scenario,
        burst: burst ? `${s}|${Math.floor(k / burst.period)}` : null,
      });
    }
    recs.sort((a, b) => a.t - b.t);

    // Flows calling any URL: one per flow.
    const externalHttpFlows = new Set(recs.flatMap((r) => (r.scenario === 'flow.externalHttp' && r.objectId ? [r.objectId] : []))).size;

    // Departures with flow activity of the same user within 7 days. A deleted user's UPN is prefixed with the user's
    // object id without dashes (Entra "Delete user." records).
    const flowTimes = new Map<string, number[]>();
    for (const r of recs) {
      if (r.recordType !== 30 || !r.user || !['CreateFlow', 'EditFlow', 'DeleteFlow'].includes(r.operation)) continue;
      const mine = flowTimes.get(r.user) ?? [];
      flowTimes.set(r.user, mine);
      mine.push(r.t);
    }
    let departuresWithFlowActivity = 0;
    for (const r of recs) {
      if (r.recordType !== 8 || !['Disable account.', 'Delete user.'].includes(r.operation) || !r.objectId?.includes('@')) continue;
      const upn = r.objectId.toLowerCase().replace(/^[0-9a-f]{32}(?=[^@]+@)/, '');
      if ((flowTimes.get(upn) ?? []).some((t) => Math.abs(t - r.t) <= 7 * DAY)) departuresWithFlowActivity++;
    }

    // Client addresses: when each (user, address) was first seen, and each user's first record with an address.
    const firstSeen = new Map<string, number>();
    const firstAny = new Map<string, number>();
    for (const r of recs) {
      if (!r.user || !r.ip) continue;
      if (!firstSeen.has(`${r.user}|${r.ip}`)) firstSeen.set(`${r.user}|${r.ip}`, r.t);
      if (!firstAny.has(r.user)) firstAny.set(r.user, r.t);
    }
    const interactions = recs.filter((r) => r.operation === 'CopilotInteraction' && r.user);
    const newIps = new Set<string>();
    for (const r of interactions)
      if (r.ip && firstSeen.get(`${r.user}|${r.ip}`) === r.t && (firstAny.get(r.user!) as number) < r.t) newIps.add(`${r.user}|${r.ip}`);

    // Volume spikes: each hour starting at one of the user's interactions (from an hour before the burst to its end)
    // judged against the 7 days before the hour preceding it.
    const all = interactions.map((r) => r.t);
    const byUser = new Map<string, number[]>();
    for (const r of interactions) {
      const mine = byUser.get(r.user!) ?? [];
      byUser.set(r.user!, mine);
      mine.push(r.t);
    }
    const spikeBursts = new Map<string, Rec[]>();
    for (const r of interactions) if (r.scenario === 'copilot.volumeSpike' && r.burst) spikeBursts.set(r.burst, [...(spikeBursts.get(r.burst) ?? []), r]);
    const spikes = new Set<string>();
    let copilotSpikesWithoutHistory = 0;
    for (const burst of spikeBursts.values()) {
      const user = burst[0]!.user!;
      const mine = byUser.get(user)!;
      let history = false;
      let spike = false;
      for (let i = firstAtLeast(mine, burst[0]!.t - HOUR); i < mine.length && mine[i]! <= burst.at(-1)!.t && !spike; i++) {
        const at = mine[i]!;
        const to = at - HOUR;
        const from = to - 7 * DAY;
        const n = firstAtLeast(mine, to + 1) - firstAtLeast(mine, from);
        if (n === 0) continue;
        history = true;
        const hours = Math.max(1, (to - all[firstAtLeast(all, from)]!) / HOUR);
        spike = firstAtLeast(mine, at + HOUR + 1) - i >= Math.max(30, Math.ceil((10 * n) / hours));
      }
      if (!history) copilotSpikesWithoutHistory++;
      if (spike) spikes.add(`${user}|${new Date(burst.at(-1)!.t).toISOString().slice(0, 10)}`);
    }
    return { externalHttpFlows, departuresWithFlowActivity, copilotSpikes: spikes.size, copilotSpikesWithoutHistory, copilotNewIps: newIps.size };
  }

  /** `componentRecords`, `bursts` and `agentRecords` of `groundTruth` over the refs of the available unique generated records. */
  #recordGroups(available: Set<number>): Pick<AuditGroundTruth, 'componentRecords' | 'bursts' | 'agentRecords'> {
    const c = this.catalog();
    const componentRecords: AuditGroundTruth['componentRecords'] = {};
    const sets = new Map<string, { components: Set<string>; groups: Set<string> }>();
    const burstRecords = new Map<string, Map<number, number[]>>();
    const invitations = new Map<string, number[]>();
    const agentRecords: Record<string, number> = {};
    for (const ref of available) {
      const s = ref % STREAM_SLOTS;
      const k = (ref - s) / STREAM_SLOTS;
      const st = this.#streams[s] as Stream;
      // Only agent records, bursts and invitations are grouped.
      if (st.spec.kind !== 'powerPlatformAdmin' && st.spec.kind !== 'entra' && st.bursts.length === 0) continue;
      const variant = this.#variant(st, k);
      const v = st.spec.variants[variant] as KindSpec['variants'][number];
      const subject = this.#subject(st, k);
      // The agent a Bot* record is about is its ObjectId (a component record's: the component's agent).
      const agentOf = (): string => subject?.component?.botId ?? String((JSON.parse(this.#renderRef(ref)) as { ObjectId?: unknown }).ObjectId);
      if (st.spec.kind === 'powerPlatformAdmin' && v.operation.startsWith('Bot')) {
        const agent = agentOf();
        agentRecords[agent] = (agentRecords[agent] ?? 0) + 1;
      }
      if (subject && v.scenario) {
        const o = (componentRecords[v.scenario] ??= { records: 0, readable: 0, readableComponents: 0, agentUserHours: 0 });
        const g = sets.get(v.scenario) ?? { components: new Set<string>(), groups: new Set<string>() };
        sets.set(v.scenario, g);
        o.records++;
        if (subject.component?.readable) {
          o.readable++;
          g.components.add(subject.component.id);
        }
        g.groups.add(`${agentOf()}|${subject.user.upn.toLowerCase()}|${Math.floor(this.#time(st, k) / HOUR)}`);
      }
      const burst = st.bursts.find((b) => b.variant === variant);
      if (burst) {
        const key = burst.group ?? v.scenario ?? v.operation;
        const byN = burstRecords.get(key) ?? new Map<number, number[]>();
        burstRecords.set(key, byN);
        const n = Math.floor(k / burst.period);
        byN.set(n, [...(byN.get(n) ?? []), ref]);
      }
      if (v.scenario === 'entra.guestInvited') {
        const upn = String((JSON.parse(this.#renderRef(ref)) as { ObjectId?: unknown }).ObjectId).toLowerCase();
        invitations.set(upn, [...(invitations.get(upn) ?? []), this.#time(st, k)]);
      }
    }
    for (const [scenario, g] of sets) {
      const o = componentRecords[scenario]!;
      o.readableComponents = g.components.size;
      o.agentUserHours = g.groups.size;
    }
    const bursts: AuditGroundTruth['bursts'] = {};
    for (const st of this.#streams) {
      const keys = new Map<string, { size: number; guests: boolean }>();
      for (const b of st.bursts) {
        const v = st.spec.variants[b.variant] as KindSpec['variants'][number];
        const key = b.group ?? v.scenario ?? v.operation;
        const prev = keys.get(key);
        keys.set(key, { size: (prev?.size ?? 0) + b.size, guests: v.scenario === 'powerApps.sharedToNewGuests' });
      }
      for (const [key, { size, guests }] of keys) {
        const o: { whole: number; guestsInvited?: number } = { whole: 0, ...(guests ? { guestsInvited: 0 } : {}) };
        for (const [, refs] of burstRecords.get(key) ?? []) {
          if (refs.length !== size) continue;
          o.whole++;
          if (!guests) continue;
          const invited = refs.every((ref) => {
            const s = ref % STREAM_SLOTS;
            const k = (ref - s) / STREAM_SLOTS;
            const b = st.bursts.find((x) => x.variant === this.#variant(st, k))!;
            const guest = burstShareTarget(c, { n: Math.floor(k / b.period), i: (k % b.period) - b.offset });
            const t = this.#time(st, k);
            return (invitations.get(guest.upn.toLowerCase()) ?? []).some((at) => at <= t);
          });
          if (invited) o.guestsInvited = (o.guestsInvited ?? 0) + 1;
        }
        if (bursts[key]) throw new Error(`burst ${key} in two streams`);
        bursts[key] = o;
      }
    }
    return { componentRecords, bursts, agentRecords };
  }

  // --- Power BI ----------------------------------------------------------------------------------------------------

  /**
   * Power BI activity events (RecordType 20) with CreationTime in [from, to) that have happened on the emulated clock:
   * the generated `powerBi` stream plus injected Audit.General records with RecordType 20, sorted by time then Id.
   */
  powerBiEvents(from: number, to: number): Record<string, unknown>[] {
    const now = this.#clock.now();
    const hi = Math.min(to, now + 1);
    const items: { time: number; id: string; record: () => Record<string, unknown> }[] = [];
    if (hi > from) {
      const st = this.#streams.find((x) => x.spec.kind === 'powerBi') as Stream;
      if (Number.isFinite(st.intervalMs)) {
        const a = this.#firstAtOrAfter(st, from);
        const b = this.#firstAtOrAfter(st, hi);
        for (let k = a; k < b; k++) {
          const ref = k * STREAM_SLOTS + st.index;
          items.push({
            time: this.#time(st, k),
            id: recordGuid(this.#seed, st.index, k),
            record: () => JSON.parse(this.#renderRef(ref)) as Record<string, unknown>,
          });
        }
      }
      for (const b of this.#injected.values()) {
        if (b.blob.contentType !== 'Audit.General') continue;
        for (const r of b.records) {
          if (Number(r.RecordType) !== 20 || typeof r.CreationTime !== 'string') continue;
          const t = parseUtc(r.CreationTime);
          if (t === null || t < from || t >= hi) continue;
          items.push({ time: t, id: String(r.Id), record: () => clone(r) });
        }
      }
    }
    items.sort((x, y) => x.time - y.time || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    return items.map((i) => i.record());
  }
}

/** The feeds of every served tenant, the emulated clock, Power BI settings and `PublisherIdentifier` counters. */
export class FeedStore {
  readonly clock: EmulatedClock;
  readonly #store: TenantStore;
  readonly #feeds = new Map<string, TenantFeed>();
  readonly #powerBi = new Map<string, PowerBiSettings>();
  #stats: PublisherStats = { total: 0, withoutPublisherIdentifier: 0, byPublisher: {} };

  /** @param store the served tenants; @param clock the emulated clock. */
  constructor(store: TenantStore, clock: EmulatedClock) {
    this.#store = store;
    this.clock = clock;
  }

  /** The feed of a served tenant (created with default settings on first use), or null for an unknown tenant. */
  feed(tenantIdOrDomain: string): TenantFeed | null {
    const tenant = this.#store.resolve(tenantIdOrDomain);
    if (!tenant) return null;
    const key = tenant.id.toLowerCase();
    let feed = this.#feeds.get(key);
    if (!feed) {
      feed = new TenantFeed(tenant, this.clock);
      this.#feeds.set(key, feed);
    } else feed.retarget(tenant);
    return feed;
  }

  /** The Power BI settings of a tenant (defaults until changed). */
  powerBi(tenantId: string): PowerBiSettings {
    return { ...(this.#powerBi.get(tenantId.toLowerCase()) ?? DEFAULT_POWER_BI_SETTINGS) };
  }

  /** Changes Power BI settings of a tenant; throws RangeError on a bad value. Returns the settings in force. */
  setPowerBi(tenantId: string, patch: Partial<PowerBiSettings>): PowerBiSettings {
    const next = this.powerBi(tenantId);
    for (const key of ['servicePrincipalsCanUseReadOnlyAdminApis', 'rejectServicePrincipalsWithPowerBiRoles'] as const) {
      const v = patch[key];
      if (v === undefined) continue;
      if (typeof v !== 'boolean') throw new RangeError(`${key} must be a boolean`);
      next[key] = v;
    }
    if (patch.pageSize !== undefined) next.pageSize = checkNumber('pageSize', patch.pageSize, 1, 1_000_000, true);
    if (patch.historyDays !== undefined) next.historyDays = checkNumber('historyDays', patch.historyDays, 1, 3650, true);
    this.#powerBi.set(tenantId.toLowerCase(), next);
    return { ...next };
  }

  /** Counts one Management Activity request and its `PublisherIdentifier` (undefined = absent). */
  notePublisher(publisherIdentifier: string | undefined): void {
    this.#stats.total++;
    if (publisherIdentifier === undefined || publisherIdentifier === '') this.#stats.withoutPublisherIdentifier++;
    else this.#stats.byPublisher[publisherIdentifier] = (this.#stats.byPublisher[publisherIdentifier] ?? 0) + 1;
  }

  /** A copy of the `PublisherIdentifier` counters. */
  publisherStats(): PublisherStats {
    return { total: this.#stats.total, withoutPublisherIdentifier: this.#stats.withoutPublisherIdentifier, byPublisher: { ...this.#stats.byPublisher } };
  }

  /** Zeroes the `PublisherIdentifier` counters. */
  resetPublisherStats(): void {
    this.#stats = { total: 0, withoutPublisherIdentifier: 0, byPublisher: {} };
  }
}

/** `YYYY-MM-DDTHH:MM:SS.fffZ`: the `contentCreated` / `contentExpiration` format. */
export function contentTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Parses a `/subscriptions/content` time: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH:MM:SS` (optional fraction and `Z`), UTC. */
export function parseFeedTime(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?Z?)?$/i.exec(text.trim());
  if (!m) return null;
  const ms = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
    Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)),
  );
  if (Number.isNaN(ms)) return null;
  const d = new Date(ms);
  if (
    d.getUTCFullYear() !== Number(m[1]) ||
    d.getUTCMonth() + 1 !== Number(m[2]) ||
    d.getUTCDate() !== Number(m[3]) ||
    Number(m[4] ?? 0) > 23 ||
    Number(m[5] ?? 0) > 59 ||
    Number(m[6] ?? 0) > 59
  )
    return null;
  return ms;
}
