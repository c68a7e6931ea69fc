import { randomUUID } from 'node:crypto';
import type { Caller } from '../access/index.ts';
import { actorOf } from '../access/index.ts';
import { integrationOf, requireRole } from '../access/scope.ts';
import type { ContainmentActionView, ContainmentStarted } from '../contract/protection.ts';
import { defaultRemediation } from '../core/error-catalogue.ts';
import { VigilError } from '../core/errors.ts';
import type { DeviceCodePrompt } from '../platform/identity/admin.ts';
import { containAgent, releaseAgent, resolveContainmentTarget, type ContainmentDeps } from '../protection/containment.ts';
import { listContainmentActions, type ContainmentActionRow } from '../store/repositories/containment.ts';

/**
 * Containment from the API and the portal (issue 19, "Respond"): quarantining or releasing a Copilot Studio agent needs
 * a delegated token of an administrator, obtained by an interactive device-code sign-in, so the API starts the action
 * and answers as soon as Microsoft's sign-in issued the code (the code and the sign-in link, for the administrator to
 * open), and the server keeps polling the sign-in; when the administrator completes it, the quarantine call is made and
 * the action recorded exactly as `vigil protection contain|release` records it (src/protection/containment.ts), with
 * the API caller as its author. The actions in flight live in memory only (they end with their device code, 15
 * minutes at most), bounded in number; no token is ever held past the one call, returned or stored.
 *
 * Source: https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api;
 * https://learn.microsoft.com/entra/identity-platform/v2-oauth2-device-code (the device code's `expires_in`).
 */

/** Status of an action as the API shows it. */
type ActionStatus = ContainmentActionView['status'];

/** An action in flight (or just ended), kept in memory until its device code expires. */
interface InFlight {
  view: ContainmentActionView;
  organizationId: string;
  /** Epoch milliseconds after which the entry is dropped. */
  dropAt: number;
  abort: AbortController;
}

/** The action's fields known before the sign-in ends. */
interface StartInput {
  action: 'contain' | 'release';
  alertId?: string | undefined;
  stepId?: string | undefined;
  agentId?: string | undefined;
  environmentId?: string | undefined;
}

/**
 * The containment actions the API started and whose sign-in is still going (or ended within the device code's
 * lifetime, so their remediation text can still be shown). Bounded: at most `max` entries; when full, the oldest ended
 * entry goes, and when none has ended, a new start is refused (`CONTAINMENT_BUSY`).
 */
export class ContainmentSessions {
  readonly #entries = new Map<string, InFlight>();
  readonly #max: number;
  readonly #now: () => number;

  /** @param options.max entries kept (default 50); options.now clock in epoch ms (tests). */
  constructor(options: { max?: number; now?: () => number } = {}) {
    this.#max = options.max ?? 50;
    this.#now = options.now ?? Date.now;
  }

  /** Drops expired entries, then makes room for one more. @throws VigilError `CONTAINMENT_BUSY` when full of live sign-ins. */
  #room(): void {
    const now = this.#now();
    for (const [id, e] of this.#entries) if (e.dropAt <= now) this.#drop(id, e);
    if (this.#entries.size < this.#max) return;
    const ended = [...this.#entries].find(([, e]) => e.view.status !== 'awaiting-sign-in');
    if (ended) return void this.#entries.delete(ended[0]);
    throw new VigilError('CONTAINMENT_BUSY', `${this.#max} containment sign-ins are already waiting for an administrator.`, {
      remediation: 'Complete or let expire (15 minutes) the sign-ins already started, then start this one again.',
    });
  }

  #drop(id: string, e: InFlight): void {
    e.abort.abort();
    this.#entries.delete(id);
  }

  /** Adds an entry. */
  add(e: InFlight): void {
    this.#room();
    this.#entries.set(e.view.id, e);
  }

  /** Sets an entry's outcome (kept until its expiry, for the remediation text). */
  end(id: string, patch: Partial<ContainmentActionView>): void {
    const e = this.#entries.get(id);
    if (e) Object.assign(e.view, patch, { userCode: null, verificationUri: null });
  }

  /** The live entries of an integration of an organization, newest first. */
  of(organizationId: string, integrationId: string): ContainmentActionView[] {
    const now = this.#now();
    return [...this.#entries.values()]
      .filter((e) => e.dropAt > now && e.organizationId === organizationId && e.view.integrationId === integrationId)
      .map((e) => ({ ...e.view }))
      .reverse();
  }

  /** Stops every sign-in still polling (server shutdown). */
  close(): void {
    for (const [id, e] of this.#entries) this.#drop(id, e);
  }
}

/** The view of a recorded action (remediation from the in-memory entry when it is still there, else the catalogue's). */
function recordedView(r: ContainmentActionRow, live: ContainmentActionView | undefined): ContainmentActionView {
  const status: ActionStatus = r.outcome === 'succeeded' ? 'succeeded' : r.outcome === 'refused' ? 'refused' : 'failed';
  return {
    id: r.id,
    action: r.action as 'contain' | 'release',
    status,
    integrationId: r.integration_id,
    environmentId: r.environment_id,
    agentId: r.agent_id,
    alertId: r.alert_id,
    stepId: r.step_id,
    requestedBy: r.requested_by,
    signedInAs: r.signed_in_as,
    requestedAt: r.requested_at,
    quarantined: r.quarantined === null ? null : r.quarantined === 1,
    userCode: null,
    verificationUri: null,
    expiresAt: null,
    error: r.error_code
      ? {
          code: r.error_code,
          message: r.error_message ?? '',
          remediation: live?.error?.code === r.error_code ? live.error.remediation : (defaultRemediationText(r.error_code) ?? null),
        }
      : null,
  };
}

/** The catalogue's remediation of a code, when it has one as plain text. */
function defaultRemediationText(code: string): string | undefined {
  const r = defaultRemediation(code as never);
  return typeof r === 'string' ? r : undefined;
}

/**
 * Starts a quarantine or a release of an agent of an integration of the caller's organization: resolves the agent
 * (from the alert, the agent step or the ids), starts the administrator's device-code sign-in, and answers once the
 * code is issued. The rest runs in the background: on the administrator's sign-in the quarantine API is called and the
 * action recorded, with `actorOf(caller)` as its author; {@link containmentActionsOf} shows how it ended. Admin only.
 * @throws VigilError `FORBIDDEN_ROLE`; `INTEGRATION_NOT_FOUND` (absent or another organization's); `ALERT_NOT_FOUND`,
 *   `AGENT_STEP_NOT_FOUND`, `INVALID_INPUT` naming `agentId` / `environmentId`; `CONTAINMENT_NOT_AVAILABLE` when it
 *   fails before a code is issued (no Power Platform API endpoint, an app that does not allow public client flows);
 *   `CONTAINMENT_BUSY`.
 */
export async function startContainment(
  deps: ContainmentDeps,
  sessions: ContainmentSessions,
  caller: Caller,
  integrationId: string,
  input: StartInput,
): Promise<ContainmentStarted> {
  requireRole(caller, 'admin');
  const integration = await integrationOf(deps.db, caller, integrationId);
  const target = await resolveContainmentTarget(deps.db, { ...input, integration: integration.id });
  const id = `ca_${randomUUID()}`;
  const abort = new AbortController();
  let issued!: (code: DeviceCodePrompt) => void;
  const codeIssued = new Promise<DeviceCodePrompt>((resolve) => (issued = resolve));
  const run = input.action === 'contain' ? containAgent : releaseAgent;
  const requestedAt = (deps.now?.() ?? new Date()).toISOString();
  const done = run(deps, {
    integration: integration.id,
    agentId: target.agentId,
    environmentId: target.environmentId,
    alertId: input.alertId,
    stepId: input.stepId,
    requestedBy: actorOf(caller),
    actionId: id,
    signIn: { kind: 'device-code', prompt: (_message, code) => issued(code), signal: abort.signal },
  });
  const first = await Promise.race([codeIssued, done.then(() => null)]);
  if (first === null) throw new VigilError('ADMIN_SIGN_IN_FAILED', 'The sign-in ended before a device code was issued.');
  const expiresAt = new Date(Date.now() + first.expiresIn * 1000).toISOString();
  const view: ContainmentActionView = {
    id,
    action: input.action,
    status: 'awaiting-sign-in',
    integrationId: integration.id,
    environmentId: target.environmentId,
    agentId: target.agentId,
    alertId: input.alertId ?? null,
    stepId: input.stepId ?? null,
    requestedBy: actorOf(caller),
    signedInAs: null,
    requestedAt,
    quarantined: null,
    userCode: first.userCode,
    verificationUri: first.verificationUri,
    expiresAt,
    error: null,
  };
  try {
    sessions.add({ view, organizationId: integration.organization_id ?? '', dropAt: Date.parse(expiresAt), abort });
  } catch (e) {
    abort.abort();
    done.catch(() => undefined);
    throw e;
  }
  done.then(
    (v) => sessions.end(id, { status: 'succeeded', quarantined: v.quarantined, signedInAs: v.signedInAs || null }),
    (e: unknown) => {
      const r = e instanceof VigilError ? e.render() : { code: 'INTERNAL', message: 'The action failed.', kind: 'internal' as const };
      const refused = r.kind === 'authorization' || r.kind === 'authentication';
      sessions.end(id, { status: refused ? 'refused' : 'failed', error: { code: r.code, message: r.message, remediation: r.remediation ?? null } });
    },
  );
  return {
    id,
    status: 'awaiting-sign-in',
    userCode: first.userCode,
    verificationUri: first.verificationUri,
    expiresAt,
    agent: target.agentId,
    environment: target.environmentId,
  };
}

/**
 * The containment actions of an integration of the caller's organization: those in flight (awaiting the
 * administrator's sign-in) and the recorded ones, newest first (at most 100 recorded). The sign-in code and link of
 * an action in flight are shown to admins only (whoever enters the code signs Vigil's call in).
 * @throws VigilError `INTEGRATION_NOT_FOUND` (absent or another organization's).
 */
export async function containmentActionsOf(
  deps: Pick<ContainmentDeps, 'db'>,
  sessions: ContainmentSessions,
  caller: Caller,
  integrationId: string,
): Promise<{ items: ContainmentActionView[] }> {
  const integration = await integrationOf(deps.db, caller, integrationId);
  const live = sessions.of(integration.organization_id ?? '', integration.id);
  const rows = await listContainmentActions(deps.db, { integrationId: integration.id });
  const recorded = new Set(rows.map((r) => r.id));
  const liveById = new Map(live.map((v) => [v.id, v]));
  const admin = caller.role === 'admin';
  const pending = live.filter((v) => !recorded.has(v.id)).map((v) => (admin ? v : { ...v, userCode: null, verificationUri: null }));
  return { items: [...pending, ...rows.map((r) => recordedView(r, liveById.get(r.id)))] };
}
