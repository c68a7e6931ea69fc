// The audit events (GET /events): Office 365 Management Activity and Power BI records as Vigil stored them, newest
// first, paged by the server, filtered by user, operation, agent (the object acted on) and time range, every filter
// in the URL. Agents are chosen by name from the inventory.
import { useState } from 'react';
import { EventsTable } from '../components/EventsTable.tsx';
import { FilterBar, FilterNote, IntegrationFilter, PagedList, SelectFilter } from '../components/ListPage.tsx';
import { useListFilters, useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import type { EventPage, InventoryPage } from '../types.ts';

const PAGE_SIZE = 50;

/** `YYYY-MM-DDTHH:MM` (a datetime-local value, read as UTC) from an ISO instant, or ''. */
const toLocalInput = (iso: string) => (iso ? iso.slice(0, 16) : '');
/** An ISO 8601 UTC instant from a datetime-local value read as UTC, or ''. */
const fromLocalInput = (v: string) => (v ? `${v}:00Z` : '');

export function EventsPage() {
  useTitle('Events');
  const filters = useListFilters();
  const [userId, operation, objectId, since, until] = ['userId', 'operation', 'objectId', 'since', 'until'].map((k) => filters.get(k)) as [
    string,
    string,
    string,
    string,
    string,
  ];
  // Drafts of the text and time fields, applied together by Enter or the Apply button; they follow the URL (Back).
  const url = { userId, operation, since: toLocalInput(since), until: toLocalInput(until) };
  const [draft, setDraft] = useState(url);
  const [last, setLast] = useState(url);
  if (JSON.stringify(url) !== JSON.stringify(last)) {
    setLast(url);
    setDraft(url);
  }
  const agents = useApiQuery<InventoryPage>('/inventory/agents', { limit: 500 });
  const agentOptions = (agents.data?.items ?? []).map((a) => ({ value: a.id, label: a.name ?? a.id }));
  const page = useApiQuery<EventPage>('/events', {
    integrationId: filters.get('integrationId'),
    userId,
    operation,
    objectId,
    since,
    until,
    cursor: filters.cursor,
    limit: PAGE_SIZE,
  });
  const text = (id: keyof typeof draft, label: string, type = 'text', hint?: string) => (
    <div className="field">
      <label htmlFor={`ev-${id}`}>{label}</label>
      <input id={`ev-${id}`} type={type} value={draft[id]} placeholder={hint} onChange={(e) => setDraft((d) => ({ ...d, [id]: e.target.value }))} />
    </div>
  );

  return (
    <>
      <h1>Events</h1>
      <FilterBar
        label="Event filters"
        onSubmit={() =>
          filters.update({
            userId: draft.userId.trim(),
            operation: draft.operation.trim(),
            since: fromLocalInput(draft.since),
            until: fromLocalInput(draft.until),
          })
        }
      >
        {text('userId', 'User', 'text', 'user@contoso.com')}
        {text('operation', 'Operation', 'text', 'BotCreate')}
        <SelectFilter id="ev-agent" label="Agent" all="All objects" options={agentOptions} {...filters.bind('objectId')} />
        {text('since', 'From (UTC)', 'datetime-local')}
        {text('until', 'Until (UTC)', 'datetime-local')}
        <IntegrationFilter id="ev-integration" {...filters.bind('integrationId')} />
        <div className="field field-button">
          <button type="submit">Apply</button>
        </div>
      </FilterBar>
      <FilterNote
        filters={[['Object', objectId && !agentOptions.some((o) => o.value === objectId) ? objectId : '']]}
        clear="Show every object"
        onClear={() => filters.update({ objectId: '' })}
      />
      <PagedList
        query={page}
        summary={(n) => `${n} event${n === 1 ? '' : 's'} on this page.`}
        pager={{ label: 'Event pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => <EventsTable label="Audit events" events={items} empty="No events match these filters." />}
      </PagedList>
    </>
  );
}
