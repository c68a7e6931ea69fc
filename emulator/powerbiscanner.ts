/**
 * Power BI admin scanner and widely-shared-artifact routes under `/powerbi` (reference §7), over `Tenant.powerBi`
 * (`powerbiinventory.ts`). Every route authorises like the activity events (`authorizePowerBiAdmin`).
 *
 * - `GET /v1.0/myorg/admin/workspaces/modified[?modifiedSince&excludePersonalWorkspaces&excludeInActiveWorkspaces]`
 *   → `[{"id"}]`. `modifiedSince` must be an ISO 8601 instant between 30 days and 30 minutes before now (emulated
 *   clock), else 400. Without it: every workspace not in state Deleted; with it: those whose `modifiedAt` is later,
 *   deleted ones included (UNCONFIRMED: whether a full list carries deleted workspaces).
 * - `POST /v1.0/myorg/admin/workspaces/getInfo?lineage&datasourceDetails&getArtifactUsers` body `{"workspaces":[…]}`
 *   (1–100 GUIDs, else 400) → 202, `Location` = the scan status URL, `{"id","createdDateTime","status":"NotStarted"}`.
 *   At most 16 scans of a tenant in flight (NotStarted/Running): a 17th gets 429 with `Retry-After: 1` (UNCONFIRMED
 *   body). The result is the snapshot of the workspaces at this call.
 * - `GET /v1.0/myorg/admin/workspaces/scanStatus/{scanId}` → `{"id","createdDateTime","status"}`: the first poll
 *   answers Running, the second Succeeded (or Failed with `error` when `PowerBiEstate.failScans` was > 0 at creation);
 *   unknown id → 404.
 * - `GET /v1.0/myorg/admin/workspaces/scanResult/{scanId}` → the GetScanResult body once Succeeded; before: 400
 *   `ScanNotCompleted` (UNCONFIRMED code); unknown or older than 24 h (emulated clock) → 404.
 * - `GET /v1.0/myorg/admin/widelySharedArtifacts/{publishedToWeb|linksSharedToWholeOrganization}[?continuationToken='…']`
 *   → `{"artifactAccessEntities":[…],"continuationUri","continuationToken"}` with `PowerBiEstate.widelySharedPageSize`
 *   (default 100) entries a page; the last page has neither continuation field.
 *
 * Sources: learn.microsoft.com/rest/api/power-bi/admin/workspace-info-get-modified-workspaces (30 min–30 days range,
 * 30 req/h), …/workspace-info-post-workspace-info (500 req/h, 16 concurrent), …/workspace-info-get-scan-status
 * (10,000 req/h), …/workspace-info-get-scan-result (only after Succeeded; kept 24 h; 500 req/h),
 * …/widely-shared-artifacts-published-to-web and …/widely-shared-artifacts-links-shared-to-whole-organization
 * (200 req/h, `continuationToken`), learn.microsoft.com/fabric/governance/metadata-scanning-run (chunks of 100).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseUtc } from './clock.ts';
import { newId } from './common.ts';
import { authorizePowerBiAdmin, type PowerBiContext } from './powerbi.ts';
import { scanResultJson, widelySharedEntries, type ScanOptions } from './powerbiinventory.ts';
import type { Tenant } from './tenant.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Workspaces per getInfo call (metadata-scanning-run: "chunks of 100 workspaces at most"). */
export const SCAN_MAX_WORKSPACES = 100;
/** Scans of a tenant in flight at once (PostWorkspaceInfo limitations). */
export const SCAN_MAX_CONCURRENT = 16;
/** How long a scan result stays available. */
export const SCAN_RESULT_TTL_MS = DAY;
/** A scan nobody polls counts as in flight for this long (wall clock), so an abandoned client does not block forever. */
const ABANDONED_SCAN_MS = 2 * MINUTE;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Scan {
  id: string;
  tenantId: string;
  createdMs: number;
  createdWallMs: number;
  polls: number;
  fails: boolean;
  result: Record<string, unknown>;
}

function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

function bad(reply: FastifyReply, message: string, code = 'InvalidRequest'): FastifyReply {
  return json(reply, 400, { error: { code, message } });
}

function statusOf(scan: Scan): 'NotStarted' | 'Running' | 'Succeeded' | 'Failed' {
  if (scan.polls === 0) return 'NotStarted';
  if (scan.polls === 1) return 'Running';
  return scan.fails ? 'Failed' : 'Succeeded';
}

function flag(value: string | undefined): boolean {
  return value !== undefined && value.toLowerCase() === 'true';
}

function encodeToken(offset: number, kind: string): string {
  return Buffer.from(JSON.stringify({ o: offset, k: kind }), 'utf8').toString('base64url');
}

function decodeToken(raw: string, kind: string): number | null {
  try {
    const o = JSON.parse(Buffer.from(decodeURIComponent(raw.trim().replace(/^'(.*)'$/s, '$1')), 'base64url').toString('utf8')) as { o?: unknown; k?: unknown };
    return o.k === kind && typeof o.o === 'number' && Number.isInteger(o.o) && o.o >= 0 ? o.o : null;
  } catch {
    return null;
  }
}

/** Registers the scanner and widely-shared-artifact routes (scan state lives in this registration). */
export function registerPowerBiScanner(app: FastifyInstance, ctx: PowerBiContext): void {
  const scans = new Map<string, Scan>();
  const now = () => ctx.feeds.clock.now();
  const estateOf = (tenant: Tenant) => tenant.powerBi ?? { workspaces: [], datasources: [] };

  app.get('/v1.0/myorg/admin/workspaces/modified', async (req: FastifyRequest, reply: FastifyReply) => {
    const tenant = await authorizePowerBiAdmin(ctx, req, reply);
    if (!tenant) return reply;
    const q = req.query as Record<string, string | undefined>;
    let since: number | null = null;
    if (q.modifiedSince !== undefined) {
      since = parseUtc(q.modifiedSince);
      if (since === null) return bad(reply, 'modifiedSince must be an ISO 8601 UTC date-time.');
      const t = now();
      if (since > t - 30 * MINUTE || since < t - 30 * DAY) return bad(reply, 'modifiedSince must be between 30 days and 30 minutes before the current time.');
    }
    let list = estateOf(tenant).workspaces.filter((w) => (since === null ? w.state !== 'Deleted' : Date.parse(w.modifiedAt) > since));
    if (flag(q.excludePersonalWorkspaces)) list = list.filter((w) => w.type !== 'PersonalGroup');
    if (flag(q.excludeInActiveWorkspaces)) list = list.filter((w) => w.state === 'Active');
    return json(
      reply,
      200,
      list.map((w) => ({ id: w.id })),
    );
  });

  app.post('/v1.0/myorg/admin/workspaces/getInfo', async (req: FastifyRequest, reply: FastifyReply) => {
    const tenant = await authorizePowerBiAdmin(ctx, req, reply);
    if (!tenant) return reply;
    const body = req.body as { workspaces?: unknown } | undefined;
    const ids = body?.workspaces;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && GUID.test(id))) {
      return bad(reply, 'The body must be {"workspaces": [workspace ids]} with 1 to 100 GUIDs.');
    }
    if (ids.length > SCAN_MAX_WORKSPACES) return bad(reply, `At most ${SCAN_MAX_WORKSPACES} workspaces per request; got ${ids.length}.`);
    const wall = Date.now();
    const inFlight = [...scans.values()].filter(
      (s) => s.tenantId === tenant.id && (statusOf(s) === 'NotStarted' || statusOf(s) === 'Running') && wall - s.createdWallMs < ABANDONED_SCAN_MS,
    ).length;
    if (inFlight >= SCAN_MAX_CONCURRENT) {
      return json(reply.header('retry-after', '1'), 429, {
        error: { code: 'TooManyRequests', message: `At most ${SCAN_MAX_CONCURRENT} scans may run at once.` },
      });
    }
    const q = req.query as Record<string, string | undefined>;
    const options: ScanOptions = { lineage: flag(q.lineage), datasourceDetails: flag(q.datasourceDetails), getArtifactUsers: flag(q.getArtifactUsers) };
    const estate = estateOf(tenant);
    let fails = false;
    if ((estate.failScans ?? 0) > 0) {
      estate.failScans = (estate.failScans ?? 0) - 1;
      fails = true;
    }
    // Expired scans are forgotten here, so the map stays bounded by what 24 h of calls created.
    for (const [id, s] of scans) if (now() - s.createdMs > SCAN_RESULT_TTL_MS) scans.delete(id);
    const scan: Scan = {
      id: newId(),
      tenantId: tenant.id,
      createdMs: now(),
      createdWallMs: wall,
      polls: 0,
      fails,
      result: scanResultJson(estate, ids as string[], options),
    };
    scans.set(scan.id, scan);
    const location = `${ctx.baseUrl()}/powerbi/v1.0/myorg/admin/workspaces/scanStatus/${scan.id}`;
    return json(reply.header('location', location), 202, { id: scan.id, createdDateTime: new Date(scan.createdMs).toISOString(), status: 'NotStarted' });
  });

  const findScan = (tenant: Tenant, id: string): Scan | undefined => {
    const s = scans.get(id.toLowerCase());
    return s && s.tenantId === tenant.id && now() - s.createdMs <= SCAN_RESULT_TTL_MS ? s : undefined;
  };

  app.get<{ Params: { scanId: string } }>('/v1.0/myorg/admin/workspaces/scanStatus/:scanId', async (req, reply) => {
    const tenant = await authorizePowerBiAdmin(ctx, req, reply);
    if (!tenant) return reply;
    const scan = findScan(tenant, req.params.scanId);
    if (!scan) return json(reply, 404, { error: { code: 'ScanNotFound', message: `No scan ${req.params.scanId}.` } });
    scan.polls++;
    const status = statusOf(scan);
    return json(reply, 200, {
      id: scan.id,
      createdDateTime: new Date(scan.createdMs).toISOString(),
      status,
      ...(status === 'Failed' ? { error: { code: 'ScanFailed', message: 'The scan failed.' } } : {}),
    });
  });

  app.get<{ Params: { scanId: string } }>('/v1.0/myorg/admin/workspaces/scanResult/:scanId', async (req, reply) => {
    const tenant = await authorizePowerBiAdmin(ctx, req, reply);
    if (!tenant) return reply;
    const scan = findScan(tenant, req.params.scanId);
    if (!scan)
      return json(reply, 404, { error: { code: 'ScanNotFound', message: `No scan ${req.params.scanId}, or its result expired (results are kept 24 hours).` } });
    if (statusOf(scan) !== 'Succeeded')
      return bad(reply, `Scan ${scan.id} is ${statusOf(scan)}; call GetScanResult only after GetScanStatus answers Succeeded.`, 'ScanNotCompleted');
    return json(reply, 200, scan.result);
  });

  for (const kind of ['publishedToWeb', 'linksSharedToWholeOrganization'] as const) {
    app.get(`/v1.0/myorg/admin/widelySharedArtifacts/${kind}`, async (req: FastifyRequest, reply: FastifyReply) => {
      const tenant = await authorizePowerBiAdmin(ctx, req, reply);
      if (!tenant) return reply;
      const q = req.query as Record<string, string | undefined>;
      let offset = 0;
      if (q.continuationToken !== undefined) {
        const decoded = decodeToken(q.continuationToken, kind);
        if (decoded === null) return bad(reply, 'Invalid continuation token.');
        offset = decoded;
      }
      const size = Math.max(1, estateOf(tenant).widelySharedPageSize ?? 100);
      const all = widelySharedEntries(tenant, kind);
      const page = all.slice(offset, offset + size);
      const next = offset + page.length < all.length ? encodeToken(offset + page.length, kind) : null;
      return json(reply, 200, {
        artifactAccessEntities: page,
        ...(next
          ? {
              continuationUri: `${ctx.baseUrl()}/powerbi/v1.0/myorg/admin/widelySharedArtifacts/${kind}?continuationToken='${encodeURIComponent(next)}'`,
              continuationToken: encodeURIComponent(next),
            }
          : {}),
      });
    });
  }
}
