// The audit events (GET /events): Office 365 Management Activity and Power BI records as Vigil stored them, newest
// first, paged by the server, filtered by user, operation, agent (the object acted on) and time range, every filter
// in the URL. Agents are chosen by name, searched in the inventory on the server.
import { useState } from 'react';
import { EventsTable } from '../components/EventsTable.tsx';
import { FilterBar, IntegrationFilter, InventoryPicker, PagedList, TimeRangeFilter, useTimeRange } from '../components/ListPage.tsx';
import { useListFilters, useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import type { EventPage } from '../types.ts';

const PAGE_SIZE = 50;

export function EventsPage() {
  useTitle('Events');
  const filters = useListFilters();
  const [userId, operation, objectId] = ['userId', 'operation', 'objectId'].map((k) => filters.get(k)) as [string, string, string];
  const range = useTimeRange(filters);
  // Drafts of the text fields, applied together by Enter or the Apply button; they follow the URL (Back).
  const url = { userId, operation };
  const [draft, setDraft] = useState(url);
  const [last, setLast] = useState(url);
  if (JSON.stringify(url) !== JSON.stringify(last)) {
    setLast(url);
    setDraft(url);
  }
  const page = useApiQuery<EventPage>('/events', {
    integrationId: filters.get('integrationId'),
    userId,
    operation,
    objectId,
    ...range,
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
          })
        }
      >
        {text('userId', 'User', 'text', 'user@contoso.com')}
        {text('operation', 'Operation', 'text', 'BotCreate')}
        <InventoryPicker id="ev-agent" label="Agent" kind="agents" all="All objects" {...filters.bind('objectId')} />
        <TimeRangeFilter id="ev-time" label="Time" filters={filters} precision="minute" />
        <IntegrationFilter id="ev-integration" {...filters.bind('integrationId')} />
        <div className="field field-button">
          <button type="submit">Apply</button>
        </div>
      </FilterBar>
      <PagedList
        query={page}
        summary={(n) => {
          const total = page.data?.total ?? n;
          const count = `${page.data?.totalIsLowerBound ? 'More than ' : ''}${total.toLocaleString('en-US')}`;
          return `${count} event${total === 1 && !page.data?.totalIsLowerBound ? ' matches' : 's match'}; ${n} on this page.`;
        }}
        pager={{ label: 'Event pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => <EventsTable label="Audit events" events={items} empty="No events match these filters." />}
      </PagedList>
    </>
  );
}
