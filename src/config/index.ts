import { resolve } from 'node:path';
import { z } from 'zod';
import { VigilError } from '../core/errors.ts';
import { resolveCloudProfile, type CloudProfile } from './cloud.ts';

/**
 * Vigil's configuration: one zod schema over the environment, validated once and frozen. No default secrets: the
 * master key is either given (`VIGIL_MASTER_KEY`) or generated into the data directory on first use.
 * Every variable is listed in docs/configuration.md.
 */
const envSchema = z.object({
  /** PostgreSQL connection string; SQLite in the data directory when unset. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional(),
  /** PostgreSQL schema for Vigil's tables. */
  VIGIL_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lower-case identifier')
    .default('public'),
  VIGIL_DATA_DIR: z.string().min(1).optional(),
  VIGIL_MASTER_KEY: z.string().min(1).optional(),
  VIGIL_CLOUD: z.string().default('public'),
  VIGIL_ENDPOINTS_FILE: z.string().min(1).optional(),
  VIGIL_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Maximum attempts per upstream request (first try included). */
  VIGIL_HTTP_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(6),
  /** Longest single wait for a `Retry-After` or backoff, in seconds. */
  VIGIL_HTTP_MAX_WAIT_SECONDS: z.coerce.number().positive().max(600).default(120),
  /** The operator-managed application (Mode B): its client id, and its secret or certificate (PEM with key). */
  VIGIL_MANAGED_APP_CLIENT_ID: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a GUID')
    .optional(),
  VIGIL_MANAGED_APP_CLIENT_SECRET: z.string().min(1).optional(),
  VIGIL_MANAGED_APP_CERTIFICATE_FILE: z.string().min(1).optional(),
  /** Where Entra ID sends the administrator after admin consent (must be a redirect URI of the managed app). */
  VIGIL_CONSENT_REDIRECT_URI: z.string().url().optional(),
  /** Lifetime of a consent link's signed state, seconds. */
  VIGIL_CONSENT_STATE_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(3_600),
  /** Public client and scope used to sign a platform administrator in (registration of the management app). */
  VIGIL_ADMIN_CLIENT_ID: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a GUID')
    .optional(),
  VIGIL_ADMIN_SCOPE: z.string().min(1).optional(),
  /** After each collection, grant System Administrator in environments Vigil cannot read yet (else only report them). */
  VIGIL_AUTO_GRANT_ACCESS: z.enum(['true', 'false']).default('false'),
  /** PublisherIdentifier sent on every Management Activity call: the operator's tenant GUID (default: each integration's tenant). */
  VIGIL_PUBLISHER_ID: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a GUID')
    .optional(),
  /**
   * Management Activity content blobs fetched at once per content type. Memory grows with it (one parsed blob each);
   * 4 keeps `bench:audit` above 50,000 records/s on 2 cores (bench/README.md).
   */
  VIGIL_AUDIT_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  /** Scheduled jobs ingest the audit feed and run the detections after each collection. */
  VIGIL_AUDIT_IN_JOBS: z.enum(['true', 'false']).default('true'),
  /** Region of this deployment (`default` or `us`): its egress addresses are what customers safelist. */
  VIGIL_REGION: z.enum(['default', 'us']).default('default'),
  /** This deployment's service API and portal URLs, shown to customers. */
  VIGIL_API_URL: z.string().url().optional(),
  VIGIL_PORTAL_URL: z.string().url().optional(),
  VIGIL_HOST: z.string().default('127.0.0.1'),
  VIGIL_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Portal sessions end after this long without a request, and after the absolute limit in any case (OWASP ASVS 3.3). */
  VIGIL_SESSION_IDLE_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
  VIGIL_SESSION_ABSOLUTE_SECONDS: z.coerce.number().int().min(300).max(2_592_000).default(43_200),
  /** Failed sign-ins in a row that lock an account, and for how long. */
  VIGIL_LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
  VIGIL_LOGIN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** Sign-in attempts per client address per minute. */
  VIGIL_LOGIN_ATTEMPTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /** `Secure` on the session cookies: auto (when the request came over HTTPS), true or false. */
  VIGIL_SECURE_COOKIES: z.enum(['auto', 'true', 'false']).default('auto'),
  /** Trust X-Forwarded-For/-Proto from these proxies (comma-separated addresses or CIDRs), or `true` for any. */
  VIGIL_TRUST_PROXY: z.string().optional(),
  /** The built portal served by `vigil serve` (default: web/dist of the installation). */
  VIGIL_PORTAL_DIR: z.string().optional(),
  VIGIL_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  VIGIL_COLLECT_CRON: z.string().default('0 * * * *'),
  VIGIL_COLLECT_JITTER_SECONDS: z.coerce.number().int().min(0).max(86_400).default(900),
  VIGIL_SCHEDULER_TICK_SECONDS: z.coerce.number().positive().max(3600).default(30),
  VIGIL_JOB_RETRY_LIMIT: z.coerce.number().int().min(0).max(100).default(4),
  VIGIL_JOB_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  // Seconds without progress (jobs/queue.ts ProgressWatchdog); at most the 23-hour ceiling of any job (MAX_JOB_SECONDS).
  VIGIL_JOB_EXPIRE_SECONDS: z.coerce.number().int().min(10).max(82_800).default(21_600),
  VIGIL_JOB_MAINTENANCE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  VIGIL_SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(30),
  /**
   * Shared budgets (platform/http/budget.ts has every service's documented limits). Settable here: Graph identity
   * resource units per 10 s per tenant — unset, each tenant's documented tier (3,500 / 5,000 / 8,000 for tenants of
   * < 50 / 50–500 / > 500 users, `throttling-limits.md`), set, that figure for every tenant; Management
   * Activity requests per minute (20,000: a third of the 60K/min pool a tenant's publisher gets when every call carries
   * `PublisherIdentifier`, as Vigil's do; 2,000 is the baseline without it — API reference and troubleshooting guide),
   * Dataverse requests per 5 minutes per environment (6,000, `api-limits.md`).
   */
  VIGIL_GRAPH_RU_PER_10S: z.coerce.number().int().min(1).optional(),
  /** Multiplies every throttling budget (0.01–100); 1 keeps Microsoft's documented figures. */
  VIGIL_BUDGET_SCALE: z.coerce.number().min(0.01).max(100).default(1),
  VIGIL_MANAGEMENT_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(20000),
  VIGIL_DATAVERSE_REQUESTS_PER_5MIN: z.coerce.number().int().min(1).default(6000),
  /** Graph page size (`$top`), 1–999. */
  VIGIL_GRAPH_PAGE_SIZE: z.coerce.number().int().min(1).max(999).default(999),
  /** Dataverse page size (`Prefer: odata.maxpagesize`), 1–5000. */
  VIGIL_DATAVERSE_PAGE_SIZE: z.coerce.number().int().min(1).max(5000).default(5000),
  /** SIEM webhook (findings opened/reopened/resolved, alerts raised): https, or http to the loopback address only. */
  VIGIL_WEBHOOK_URL: z
    .string()
    .url()
    // zod runs these refinements after a failed .url() as well: a value that is no URL must not throw from them.
    .refine((u) => {
      const x = URL.canParse(u) ? new URL(u) : null;
      return !x || x.protocol === 'https:' || (x.protocol === 'http:' && (x.hostname === '127.0.0.1' || x.hostname === '[::1]'));
    }, 'must be an https:// URL (http:// only for 127.0.0.1 or [::1])')
    .refine((u) => {
      const x = URL.canParse(u) ? new URL(u) : null;
      return !x || (!x.username && !x.password);
    }, 'must not hold credentials: the secret goes in VIGIL_WEBHOOK_SECRET')
    .optional(),
  /** HMAC-SHA256 key signing each webhook body. Never logged. */
  VIGIL_WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters (e.g. `openssl rand -hex 32`)').optional(),
  /** Syslog (RFC 5424) target: `udp://host:514`, `tcp://host:601` (octet counting, RFC 6587) or `tls://host:6514`. */
  VIGIL_SYSLOG_TARGET: z
    .string()
    .regex(/^(udp|tcp|tls):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must look like udp://host:514, tcp://host:601 or tls://host:6514')
    .optional(),
  /** RFC 5424 APP-NAME of Vigil's syslog messages (1–48 printable ASCII characters, no space). */
  VIGIL_SYSLOG_APP_NAME: z
    .string()
    .regex(/^[!-~]{1,48}$/, 'must be 1–48 printable ASCII characters without spaces')
    .default('vigil'),
  /**
   * Test hook of the crash-recovery suite (test/reliability): `vigil collect` / `vigil audit` SIGKILL themselves after
   * this many stored pages / content blobs. Unset (always, outside that suite): no effect.
   */
  VIGIL_TEST_KILL_AFTER_PAGES: z.coerce.number().int().min(1).optional(),
});

/** Every environment variable the configuration reads (docs/configuration.md documents each; a test keeps them in step). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

/** Validated, frozen configuration. */
export interface VigilConfig {
  /** Absolute path of the data directory (SQLite file, key file, logs). */
  dataDir: string;
  /** Base64 or hex 32-byte key-encryption key from `VIGIL_MASTER_KEY`, when given. Never logged. */
  masterKey: string | undefined;
  cloud: CloudProfile;
  logLevel: z.infer<typeof envSchema>['VIGIL_LOG_LEVEL'];
  http: { maxAttempts: number; maxWaitSeconds: number };
  /** Page sizes asked of upstream APIs. */
  pageSize: { graph: number; dataverse: number };
  /** PostgreSQL connection string and schema, or undefined for SQLite. Never logged (it may hold a password). */
  database: { url: string; schema: string } | undefined;
  /** Settable figures of the shared throttling budgets (`identityRuPer10s` unset: each tenant's documented tier). */
  budgets: { identityRuPer10s: number | undefined; managementPerMinute: number; dataversePer5min: number; scale: number };
  /** The operator-managed application, when configured. Never logged. */
  managedApp: { clientId: string; clientSecret: string | undefined; certificateFile: string | undefined } | undefined;
  /** PublisherIdentifier for the Management Activity API, or undefined (each integration's tenant id). */
  publisherId: string | undefined;
  /** Content blobs fetched at once per content type. */
  auditConcurrency: number;
  /** Jobs run the audit cycle after the collection. */
  auditInJobs: boolean;
  /** Grant access to newly found environments after each collection. */
  autoGrantAccess: boolean;
  /** Overrides of the administrator sign-in's public client id and scope (defaults in platform/identity/admin.ts). */
  adminSignIn: { clientId: string | undefined; scope: string | undefined };
  /** Admin consent callback and the lifetime of its signed state (seconds). */
  consent: { redirectUri: string; stateTtlSeconds: number };
  /** The deployment's region, service API URL and portal URL. */
  region: { id: 'default' | 'us'; apiUrl: string | undefined; portalUrl: string | undefined };
  /** `vigil serve` listen address, proxy trust, cookies and the portal's directory. */
  server: {
    host: string;
    port: number;
    trustProxy: boolean | string;
    secureCookies: boolean | 'auto';
    portalDir: string | undefined;
    loginAttemptsPerMinute: number;
  };
  /** Portal sessions and sign-in lock-out (seconds). */
  access: { idleTimeoutSeconds: number; absoluteTimeoutSeconds: number; maxFailedLogins: number; lockoutSeconds: number };
  /** SIEM sinks: the webhook (its secret never logged) and the syslog target; each undefined when not configured. */
  sinks: {
    webhook: { url: string; secret: string } | undefined;
    syslog: { transport: 'udp' | 'tcp' | 'tls'; host: string; port: number; appName: string } | undefined;
  };
  /**
   * `VIGIL_TEST_KILL_AFTER_PAGES`: the crash-recovery suite's hook (`vigil collect` and `vigil audit` SIGKILL
   * themselves after this many stored pages or blobs); undefined outside that suite, and then nothing happens.
   */
  testKillAfterPages: number | undefined;
  /** Collection jobs and their schedule. */
  jobs: {
    workerConcurrency: number;
    cron: string;
    jitterSeconds: number;
    tickSeconds: number;
    retryLimit: number;
    retryDelaySeconds: number;
    expireInSeconds: number;
    maintenanceSeconds: number;
    shutdownTimeoutSeconds: number;
  };
}

/**
 * Builds the configuration from the environment and CLI overrides. Data directory: `--data-dir`, else
 * `VIGIL_DATA_DIR`, else `./.vigil/`.
 *
 * @throws VigilError `configuration` naming the variable at fault.
 */
export function loadConfig(env: NodeJS.ProcessEnv, overrides: { dataDir?: string | undefined } = {}): VigilConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new VigilError('CONFIG_INVALID', `Environment variable ${name}: ${issue.message}`, {
      field: name,
      remediation: `Fix or unset ${name} (see docs/configuration.md).`,
    });
  }
  const e = parsed.data;
  if (e.VIGIL_MANAGED_APP_CLIENT_ID && !e.VIGIL_MANAGED_APP_CLIENT_SECRET && !e.VIGIL_MANAGED_APP_CERTIFICATE_FILE) {
    throw new VigilError('CONFIG_INVALID', 'VIGIL_MANAGED_APP_CLIENT_ID is set without a credential.', {
      field: 'VIGIL_MANAGED_APP_CLIENT_SECRET',
      remediation: 'Set VIGIL_MANAGED_APP_CLIENT_SECRET, or VIGIL_MANAGED_APP_CERTIFICATE_FILE (PEM holding the certificate and its private key).',
    });
  }
  if (e.VIGIL_WEBHOOK_URL && !e.VIGIL_WEBHOOK_SECRET) {
    throw new VigilError('CONFIG_INVALID', 'VIGIL_WEBHOOK_URL is set without VIGIL_WEBHOOK_SECRET.', {
      field: 'VIGIL_WEBHOOK_SECRET',
      remediation: 'Set VIGIL_WEBHOOK_SECRET to a random key shared with the receiver (e.g. `openssl rand -hex 32`): every delivery is signed with it.',
    });
  }
  const syslog = e.VIGIL_SYSLOG_TARGET ? /^(udp|tcp|tls):\/\/\[?([^\]]+?)\]?:(\d+)$/.exec(e.VIGIL_SYSLOG_TARGET) : null;
  if (syslog && (Number(syslog[3]) < 1 || Number(syslog[3]) > 65535)) {
    throw new VigilError('CONFIG_INVALID', `Environment variable VIGIL_SYSLOG_TARGET: port ${syslog[3]} is out of range.`, {
      field: 'VIGIL_SYSLOG_TARGET',
      remediation: 'Give a port from 1 to 65535, e.g. udp://siem.example.com:514.',
    });
  }
  return Object.freeze({
    dataDir: resolve(overrides.dataDir ?? e.VIGIL_DATA_DIR ?? '.vigil'),
    masterKey: e.VIGIL_MASTER_KEY,
    cloud: resolveCloudProfile(e.VIGIL_CLOUD, e.VIGIL_ENDPOINTS_FILE),
    logLevel: e.VIGIL_LOG_LEVEL,
    http: { maxAttempts: e.VIGIL_HTTP_MAX_ATTEMPTS, maxWaitSeconds: e.VIGIL_HTTP_MAX_WAIT_SECONDS },
    pageSize: { graph: e.VIGIL_GRAPH_PAGE_SIZE, dataverse: e.VIGIL_DATAVERSE_PAGE_SIZE },
    database: e.DATABASE_URL ? { url: e.DATABASE_URL, schema: e.VIGIL_DATABASE_SCHEMA } : undefined,
    server: {
      host: e.VIGIL_HOST,
      port: e.VIGIL_PORT,
      trustProxy: e.VIGIL_TRUST_PROXY === undefined || e.VIGIL_TRUST_PROXY === 'false' ? false : e.VIGIL_TRUST_PROXY === 'true' ? true : e.VIGIL_TRUST_PROXY,
      secureCookies: e.VIGIL_SECURE_COOKIES === 'auto' ? ('auto' as const) : e.VIGIL_SECURE_COOKIES === 'true',
      portalDir: e.VIGIL_PORTAL_DIR,
      loginAttemptsPerMinute: e.VIGIL_LOGIN_ATTEMPTS_PER_MINUTE,
    },
    access: {
      idleTimeoutSeconds: e.VIGIL_SESSION_IDLE_SECONDS,
      absoluteTimeoutSeconds: e.VIGIL_SESSION_ABSOLUTE_SECONDS,
      maxFailedLogins: e.VIGIL_LOGIN_MAX_FAILURES,
      lockoutSeconds: e.VIGIL_LOGIN_LOCKOUT_SECONDS,
    },
    sinks: {
      webhook: e.VIGIL_WEBHOOK_URL && e.VIGIL_WEBHOOK_SECRET ? { url: e.VIGIL_WEBHOOK_URL, secret: e.VIGIL_WEBHOOK_SECRET } : undefined,
      syslog: syslog
        ? { transport: syslog[1] as 'udp' | 'tcp' | 'tls', host: syslog[2]!, port: Number(syslog[3]), appName: e.VIGIL_SYSLOG_APP_NAME }
        : undefined,
    },
    region: { id: e.VIGIL_REGION, apiUrl: e.VIGIL_API_URL, portalUrl: e.VIGIL_PORTAL_URL },
    managedApp: e.VIGIL_MANAGED_APP_CLIENT_ID
      ? {
          clientId: e.VIGIL_MANAGED_APP_CLIENT_ID.toLowerCase(),
          clientSecret: e.VIGIL_MANAGED_APP_CLIENT_SECRET,
          certificateFile: e.VIGIL_MANAGED_APP_CERTIFICATE_FILE,
        }
      : undefined,
    autoGrantAccess: e.VIGIL_AUTO_GRANT_ACCESS === 'true',
    publisherId: e.VIGIL_PUBLISHER_ID?.toLowerCase(),
    auditConcurrency: e.VIGIL_AUDIT_CONCURRENCY,
    auditInJobs: e.VIGIL_AUDIT_IN_JOBS === 'true',
    adminSignIn: { clientId: e.VIGIL_ADMIN_CLIENT_ID, scope: e.VIGIL_ADMIN_SCOPE },
    consent: {
      redirectUri: e.VIGIL_CONSENT_REDIRECT_URI ?? `${(e.VIGIL_API_URL ?? `http://${e.VIGIL_HOST}:${e.VIGIL_PORT}`).replace(/\/+$/, '')}/consent/callback`,
      stateTtlSeconds: e.VIGIL_CONSENT_STATE_TTL_SECONDS,
    },
    testKillAfterPages: e.VIGIL_TEST_KILL_AFTER_PAGES,
    budgets: {
      identityRuPer10s: e.VIGIL_GRAPH_RU_PER_10S,
      managementPerMinute: e.VIGIL_MANAGEMENT_REQUESTS_PER_MINUTE,
      dataversePer5min: e.VIGIL_DATAVERSE_REQUESTS_PER_5MIN,
      scale: e.VIGIL_BUDGET_SCALE,
    },
    jobs: {
      workerConcurrency: e.VIGIL_WORKER_CONCURRENCY,
      cron: e.VIGIL_COLLECT_CRON,
      jitterSeconds: e.VIGIL_COLLECT_JITTER_SECONDS,
      tickSeconds: e.VIGIL_SCHEDULER_TICK_SECONDS,
      retryLimit: e.VIGIL_JOB_RETRY_LIMIT,
      retryDelaySeconds: e.VIGIL_JOB_RETRY_DELAY_SECONDS,
      expireInSeconds: e.VIGIL_JOB_EXPIRE_SECONDS,
      maintenanceSeconds: e.VIGIL_JOB_MAINTENANCE_SECONDS,
      shutdownTimeoutSeconds: e.VIGIL_SHUTDOWN_TIMEOUT_SECONDS,
    },
  });
}
