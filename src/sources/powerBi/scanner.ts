import { setTimeout as sleep } from 'node:timers/promises';
import { isVigilError, VigilError } from '../../core/errors.ts';
import type { BudgetService } from '../../platform/http/budget.ts';
import type { HttpResponse } from '../../platform/http/client.ts';
import type { StreamContext } from '../stream.ts';
import { POWER_BI_NOT_AUTHORIZED, refusalIn } from './client.ts';
import type { Json } from '../../core/json.ts';

/**
 * The Power BI admin scanner APIs (metadata scanning) and the widely-shared-artifact lists:
 * - `GET admin/workspaces/modified[?modifiedSince=…&excludePersonalWorkspaces=false]` → `[{"id"}]` (30 requests/hour;
 *   `modifiedSince` must lie between 30 days and 30 minutes before now);
 * - `POST admin/workspaces/getInfo?lineage=true&datasourceDetails=true&getArtifactUsers=true` body `{"workspaces":[…]}`
 *   with at most 100 ids → 202 `{"id","createdDateTime","status"}` (500 requests/hour, 16 scans at once);
 * - `GET admin/workspaces/scanStatus/{scanId}` until `Succeeded` (10,000 requests/hour);
 * - `GET admin/workspaces/scanResult/{scanId}` once Succeeded (kept 24 hours; 500 requests/hour);
 * - `GET admin/widelySharedArtifacts/{publishedToWeb|linksSharedToWholeOrganization}` with `continuationToken` paging
 *   (200 requests/hour each).
 * Every call goes through the HTTP pipeline (429 `Retry-After` honoured there); a 401 `PowerBINotAuthorizedException`
 * becomes VigilError `authorization` / {@link POWER_BI_NOT_AUTHORIZED} whose message names the tenant setting.
 *
 * Sources: learn.microsoft.com/rest/api/power-bi/admin/workspace-info-get-modified-workspaces,
 * …/workspace-info-post-workspace-info, …/workspace-info-get-scan-status, …/workspace-info-get-scan-result,
 * …/widely-shared-artifacts-published-to-web, …/widely-shared-artifacts-links-shared-to-whole-organization;
 * learn.microsoft.com/fabric/governance/metadata-scanning-run (full scan, chunks of 100, then modifiedSince rounds),
 * learn.microsoft.com/fabric/governance/metadata-scanning-setup and /fabric/admin/metadata-scanning-enable-read-only-apis
 * (tenant settings "Service principals can access read-only admin APIs", "Enhance admin APIs responses with detailed
 * metadata").
 */

/** Workspace ids per getInfo call. */
export const SCAN_BATCH_SIZE = 100;
/** Scans a tenant may have in flight at once (PostWorkspaceInfo: 16 concurrent). */
export const MAX_SCANS_IN_FLIGHT = 16;
/** Oldest `modifiedSince` Power BI accepts. */
export const MODIFIED_SINCE_MAX_AGE_MS = 30 * 86_400_000;
/** Power BI wants `modifiedSince` at least 30 minutes old: changes take up to that long to show. */
export const MODIFIED_SINCE_MIN_AGE_MS = 30 * 60_000;

/** Options of {@link waitForScan}. */
export interface ScanWaitOptions {
  /** First poll delay, ms; doubles up to `maxPollMs`. @default 250 */
  firstPollMs?: number;
  /** @default 15000 */
  maxPollMs?: number;
  /** Give up after this long, ms. @default 600000 (10 minutes) */
  maxWaitMs?: number;
  /** Stops polling when it returns true (the reader went away). */
  cancelled?: () => boolean;
}

/** The refusal of the read-only admin APIs, worded for a stream recorded as not collected (cause and fix). */
async function notCollected(ctx: StreamContext, e: unknown): Promise<unknown> {
  const r = await refusalIn(ctx, e);
  if (isVigilError(r) && r.code === POWER_BI_NOT_AUTHORIZED) {
    return new VigilError(POWER_BI_NOT_AUTHORIZED, `Not collected: ${r.message} Fix: ${r.remediation ?? ''}`.trim(), {
      remediation: r.remediation,
      cause: e,
    });
  }
  return r;
}

/**
 * Sends one Power BI admin request (JSON in and out), drawing on the hourly quota of its operation (`service`, see
 * `platform/http/budget.ts`). @throws as described in the module comment.
 */
export async function powerBiAdminCall<T>(
  ctx: StreamContext,
  service: BudgetService,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<HttpResponse<T>> {
  // The pipeline's link policy keeps the token on the profile's Power BI hosts (FOREIGN_LINK otherwise).
  try {
    return await ctx.http.send<T>({
      api: 'powerBi',
      service,
      method,
      url,
      body,
      token: ctx.tokens.bearer(ctx.cloud.powerBi.resource),
      tenantId: ctx.tenantId,
      signal: ctx.signal,
    });
  } catch (e) {
    throw await notCollected(ctx, e);
  }
}

/** `{powerBi}/v1.0/myorg/admin/…` */
export function adminUrl(ctx: StreamContext, path: string): string {
  return `${ctx.cloud.powerBi.baseUrl}/v1.0/myorg/admin/${path}`;
}

/** The URL of GetModifiedWorkspaces: every workspace (personal ones included), or those modified since an instant. */
export function modifiedUrl(ctx: StreamContext, modifiedSince: string | null): string {
  return adminUrl(ctx, `workspaces/modified?${modifiedSince ? `modifiedSince=${encodeURIComponent(modifiedSince)}&` : ''}excludePersonalWorkspaces=false`);
}

/** Workspace ids from GetModifiedWorkspaces at `url` (lower case, distinct, sorted). */
export async function modifiedWorkspaces(ctx: StreamContext, url: string): Promise<string[]> {
  const res = await powerBiAdminCall<{ id?: unknown }[] | null>(ctx, 'powerBiModified', 'GET', url);
  const list = Array.isArray(res.body) ? res.body : [];
  return [...new Set(list.map((w) => (typeof w?.id === 'string' ? w.id.toLowerCase() : null)).filter((id): id is string => id !== null))].sort();
}

/** In-process gate: at most {@link MAX_SCANS_IN_FLIGHT} scans per tenant, whatever the number of readers. */
const gates = new Map<string, { active: number; waiters: (() => void)[] }>();

async function acquireScanSlot(tenantId: string): Promise<() => void> {
  let g = gates.get(tenantId);
  if (!g) gates.set(tenantId, (g = { active: 0, waiters: [] }));
  const gate = g;
  while (gate.active >= MAX_SCANS_IN_FLIGHT) await new Promise<void>((resolve) => gate.waiters.push(resolve));
  gate.active++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    gate.active--;
    gate.waiters.shift()?.();
    if (gate.active === 0 && gate.waiters.length === 0) gates.delete(tenantId);
  };
}

/** Polls GetScanStatus with growing delays until Succeeded. @throws VigilError `upstream` SCAN_FAILED / SCAN_TIMEOUT. */
async function waitForScan(ctx: StreamContext, scanId: string, options: ScanWaitOptions = {}): Promise<void> {
  const started = Date.now();
  let delay = options.firstPollMs ?? 250;
  for (;;) {
    await sleep(delay);
    if (options.cancelled?.()) throw new VigilError('SCAN_ABANDONED', `Stopped waiting for Power BI scan ${scanId}.`);
    const res = await powerBiAdminCall<Json | null>(ctx, 'powerBiScanStatus', 'GET', adminUrl(ctx, `workspaces/scanStatus/${encodeURIComponent(scanId)}`));
    const status = typeof res.body?.status === 'string' ? res.body.status : '';
    if (status === 'Succeeded') return;
    if (status === 'Failed') {
      const err = (res.body?.error ?? {}) as Json;
      throw new VigilError(
        'POWER_BI_SCAN_FAILED',
        `Power BI scan ${scanId} failed${typeof err.code === 'string' ? ` (${err.code})` : ''}; the workspaces of this batch were not collected.`,
      );
    }
    if (Date.now() - started > (options.maxWaitMs ?? 600_000)) {
      throw new VigilError(
        'POWER_BI_SCAN_TIMEOUT',
        `Power BI scan ${scanId} was still ${status || 'pending'} after ${Math.round((Date.now() - started) / 1000)} s.`,
      );
    }
    delay = Math.min(delay * 2, options.maxPollMs ?? 15_000);
  }
}

/**
 * Scans up to 100 workspaces: getInfo (lineage, data source details and artifact users), wait, then the result.
 * Holds one of the tenant's 16 scan slots from getInfo until the result is read.
 * @returns the GetScanResult body and the scan's `createdDateTime`.
 */
export async function scanWorkspaces(ctx: StreamContext, ids: string[], options: ScanWaitOptions = {}): Promise<{ result: Json; scannedAt: string | null }> {
  if (ids.length === 0 || ids.length > SCAN_BATCH_SIZE)
    throw new VigilError('SCAN_BATCH_SIZE', `A Power BI scan takes 1 to ${SCAN_BATCH_SIZE} workspaces; got ${ids.length}.`, {
      field: 'workspaces',
    });
  const release = await acquireScanSlot(ctx.tenantId);
  try {
    const started = await powerBiAdminCall<Json | null>(
      ctx,
      'powerBiScanInfo',
      'POST',
      adminUrl(ctx, 'workspaces/getInfo?lineage=true&datasourceDetails=true&getArtifactUsers=true'),
      { workspaces: ids },
    );
    const scanId = typeof started.body?.id === 'string' ? started.body.id : null;
    if (!scanId) throw new VigilError('POWER_BI_SCAN_ID_MISSING', 'Power BI accepted a scan request but returned no scan id.');
    await waitForScan(ctx, scanId, options);
    const res = await powerBiAdminCall<Json | null>(ctx, 'powerBiScanResult', 'GET', adminUrl(ctx, `workspaces/scanResult/${encodeURIComponent(scanId)}`));
    return { result: res.body ?? {}, scannedAt: typeof started.body?.createdDateTime === 'string' ? started.body.createdDateTime : null };
  } finally {
    release();
  }
}

/** The widely-shared lists, by the URL segment Power BI uses. */
export type WidelySharedList = 'publishedToWeb' | 'linksSharedToWholeOrganization';

/** One page of a widely-shared list and the URL of the next page (undefined on the last). */
export interface WidelySharedPage {
  entities: Json[];
  next: string | undefined;
}

/**
 * Reads one page of a widely-shared list at `url` (the list's first page, or a continuation). The next page follows
 * `continuationUri` when it points at the same list, else `continuationToken` on this list (Microsoft's sample answer
 * shows a `continuationUri` of the other list, so it is not trusted blindly).
 * @throws VigilError `upstream` / `FOREIGN_LINK` when `continuationUri` is off the Power BI hosts (before the page,
 *   whose cursor would hold it, is returned).
 */
export async function widelySharedPage(ctx: StreamContext, list: WidelySharedList, url: string): Promise<WidelySharedPage> {
  const res = await powerBiAdminCall<Json | null>(ctx, 'powerBiWidelyShared', 'GET', url);
  const body = res.body ?? {};
  const raw = body.artifactAccessEntities ?? body.ArtifactAccessEntities;
  const entities = Array.isArray(raw) ? (raw.filter((e) => e && typeof e === 'object') as Json[]) : [];
  const endpoint = adminUrl(ctx, `widelySharedArtifacts/${list}`);
  let next: string | undefined;
  const uri = typeof body.continuationUri === 'string' ? body.continuationUri : undefined;
  const token = typeof body.continuationToken === 'string' && body.continuationToken !== '' ? body.continuationToken : undefined;
  // A continuationUri off the Power BI hosts fails the stream (link policy); one on them but for another list (as in
  // Microsoft's sample) is not followed: the token of this list is used instead.
  if (uri) ctx.http.links.check('powerBi', uri, 'continuationUri');
  if (uri && new URL(uri).pathname === new URL(endpoint).pathname) next = uri;
  else if (token) next = `${endpoint}?continuationToken='${token}'`;
  return { entities, next };
}
