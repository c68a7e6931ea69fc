// Audit events as a table (the events page, an alert's page), with each event's raw record fetched on demand: the
// list carries the normalised columns only, and `GET /events/{id}` answers the record as Microsoft sent it.
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api.ts';
import { useApiQuery } from '../query.ts';
import type { Event, EventDetail } from '../types.ts';
import { column, DataTable, timeColumn, type Column } from './DataTable.tsx';
import { IntegrationName } from './ListPage.tsx';
import { Loaded, Time } from './ui.tsx';

/** The raw record of one event, loaded when shown. */
function RawRecord({ event, onClose }: { event: Event; onClose: () => void }) {
  const q = useApiQuery<EventDetail>(`/events/${seg(event.id)}`);
  const heading = `Raw record: ${event.operation ?? event.id}`;
  return (
    <section className="raw-record" aria-label={heading}>
      <h3>
        {event.operation ?? event.id}{' '}
        <span className="small muted">
          <Time value={event.creationTime} />
        </span>
      </h3>
      <Loaded query={q}>
        {(d) => (
          <pre tabIndex={0} aria-label={heading}>
            <code>{JSON.stringify(d.raw, null, 2)}</code>
          </pre>
        )}
      </Loaded>
      <button type="button" className="secondary" onClick={onClose}>
        Hide raw record
      </button>
    </section>
  );
}

/** A user id as a link to the events page filtered by that user. */
const UserLink = ({ user }: { user: string | null }) =>
  user ? <Link to={`/events?userId=${encodeURIComponent(user)}`}>{user}</Link> : <span className="muted">—</span>;

/**
 * Audit events in a table labelled `label`: time, operation, user (a link to their events), workload, the object acted
 * on (its inventory name, the id as its title; the id only when Vigil holds no such object), client IP, integration,
 * and a button showing the raw record below the table.
 */
export function EventsTable({ label, events, empty }: { label: string; events: Event[]; empty: string }) {
  const [raw, setRaw] = useState<Event | null>(null);
  const columns = useMemo<Column<Event>[]>(
    () => [
      timeColumn('Time', (e) => e.creationTime),
      column('Operation', (e) => e.operation ?? <span className="muted">—</span>),
      column('User', (e) => <UserLink user={e.userId} />),
      column('Workload', (e) => e.workload ?? <span className="muted">—</span>),
      column(
        'Object',
        (e) =>
          e.objectName ? (
            <span title={e.objectId ?? undefined}>{e.objectName}</span>
          ) : e.objectId ? (
            <code className="small">{e.objectId}</code>
          ) : (
            <span className="muted">—</span>
          ),
        'col-object',
      ),
      column('Client IP', (e) => e.clientIp ?? <span className="muted">—</span>),
      column('Integration', (e) => <IntegrationName id={e.integrationId} />),
      column('Record', (e) => (
        <button type="button" className="link-button" aria-expanded={raw?.id === e.id} onClick={() => setRaw(raw?.id === e.id ? null : e)}>
          {raw?.id === e.id ? 'Hide raw' : 'Show raw'}
          <span className="visually-hidden"> record of {e.operation ?? e.id}</span>
        </button>
      )),
    ],
    [raw],
  );
  return (
    <>
      <DataTable label={label} rows={events} columns={columns} empty={empty} />
      {raw ? <RawRecord key={raw.id} event={raw} onClose={() => setRaw(null)} /> : null}
    </>
  );
}
