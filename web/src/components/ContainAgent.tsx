// "Contain agent" (issue 19, "Respond"): quarantines a Copilot Studio agent through Microsoft's Copilot Studio admin
// API (POST /api/v1/protection/{integrationId}/containment). The call needs an administrator's interactive sign-in, so
// the server answers the device code at once: the portal shows the code and the sign-in link, then polls the actions
// list (GET …/containment) until the action has ended, and shows how it ended (the remediation of a refusal).
// Source: https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api
import { useId, useState } from 'react';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { useApiMutation, useApiQuery } from '../query.ts';
import type { ContainmentAction, ContainmentActionList, ContainmentStarted } from '../types.ts';
import { CopyBlock } from './CopyBlock.tsx';
import { ErrorMessage, Time } from './ui.tsx';

/** The agent to contain, and where the request came from (recorded with the action). */
interface Props {
  integrationId: string;
  agentId: string;
  environmentId?: string | null | undefined;
  alertId?: string | undefined;
  stepId?: string | undefined;
  /** How the agent is named on the page (for the button's accessible name). */
  agentLabel?: string | null | undefined;
}

/** How an ended action is said. */
function Outcome({ a }: { a: ContainmentAction }) {
  if (a.status === 'succeeded')
    return (
      <p className="notice" role="status">
        Agent {a.quarantined ? 'quarantined: users cannot use it in any channel until it is released' : 'released: not quarantined'}
        {a.signedInAs ? ` (signed in as ${a.signedInAs})` : ''}.
      </p>
    );
  return (
    <ErrorMessage
      error={{
        message: `${a.status === 'refused' ? 'Not done' : 'Failed'}: ${a.error?.message ?? a.status}`,
        remediation: a.error?.remediation ?? undefined,
      }}
    />
  );
}

/**
 * The "Contain agent" button (admins only) and, once pressed, the sign-in code, the link and the outcome; after a
 * quarantine done here, "Release agent" lifts it the same way.
 */
export function ContainAgent({ integrationId, agentId, environmentId, alertId, stepId, agentLabel }: Props) {
  const { isAdmin } = useAuth();
  const uid = useId();
  const [started, setStarted] = useState<(ContainmentStarted & { action: 'contain' | 'release' }) | null>(null);
  const base = `/protection/${seg(integrationId)}/containment`;
  const start = useApiMutation(
    (action: 'contain' | 'release') =>
      api.post<ContainmentStarted>(base, {
        action,
        agentId,
        ...(environmentId ? { environmentId } : {}),
        ...(alertId ? { alertId } : {}),
        ...(stepId ? { stepId } : {}),
      }),
    { onSuccess: (s, action) => setStarted({ ...s, action }) },
  );
  const actions = useApiQuery<ContainmentActionList>(base, undefined, {
    enabled: started !== null,
    refetchInterval: (q) => ((q.state.data?.items.find((a) => a.id === started?.id)?.status ?? 'awaiting-sign-in') === 'awaiting-sign-in' ? 2000 : false),
  });
  if (!isAdmin) return null;
  const current = started ? actions.data?.items.find((a) => a.id === started.id) : undefined;
  const waiting = started !== null && (current === undefined || current.status === 'awaiting-sign-in');
  // Once the agent is quarantined here, the same place offers to lift it.
  const contained = current?.status === 'succeeded' && current.quarantined === true;
  return (
    <div className="containment">
      {contained ? (
        <button type="button" className="secondary" onClick={() => start.mutate('release')} disabled={start.isPending}>
          Release agent<span className="visually-hidden"> {agentLabel ?? agentId}</span>
        </button>
      ) : (
        <button type="button" className="secondary" onClick={() => start.mutate('contain')} disabled={start.isPending || waiting}>
          Contain agent<span className="visually-hidden"> {agentLabel ?? agentId}</span>
        </button>
      )}
      <ErrorMessage error={start.error} />
      {started && waiting ? (
        <div className="containment-sign-in" role="region" aria-label="Administrator sign-in">
          <p>
            An administrator of the tenant (Global Administrator, AI Administrator or Power Platform Administrator) opens{' '}
            <a href={started.verificationUri} target="_blank" rel="noreferrer">
              {started.verificationUri}
            </a>{' '}
            and enters the code below before <Time value={started.expiresAt} />. Vigil then {started.action === 'release' ? 'releases' : 'quarantines'} agent{' '}
            <code>{started.agent}</code>.
          </p>
          <CopyBlock id={`${uid}-code`} label="Sign-in code" value={started.userCode} />
          <CopyBlock id={`${uid}-link`} label="Sign-in link" value={started.verificationUri} />
          <p className="small muted" role="status">
            Waiting for the sign-in…
          </p>
        </div>
      ) : null}
      {current && current.status !== 'awaiting-sign-in' ? <Outcome a={current} /> : null}
      <ErrorMessage error={actions.error} />
    </div>
  );
}
