import { describe, expect, it } from 'vitest';
import { graphBudgetOf, type BudgetCharge } from '../../src/platform/http/budget.ts';
import type { HttpRequest } from '../../src/platform/http/client.ts';
import { runBatch, type BatchAnswer, type BatchItem } from '../../src/sources/graph/batch.ts';
import type { StreamContext } from '../../src/sources/stream.ts';

/**
 * The `$batch` helper against a scripted Graph: what each batch is charged before it is sent, and how inner 429s are
 * paced and retried.
 */
function scriptedGraph(answer: (url: string, attempt: number) => BatchAnswer) {
  const sent: { service: string | undefined; cost: number | undefined; urls: string[] }[] = [];
  const acquired: BudgetCharge[] = [];
  const throttled: { charge: BudgetCharge; retryAfter: number | undefined }[] = [];
  const attempts = new Map<string, number>();
  const http = {
    async send(req: HttpRequest) {
      const requests = (req.body as { requests: { id: string; url: string }[] }).requests;
      sent.push({ service: req.service, cost: req.cost, urls: requests.map((r) => r.url) });
      const responses = requests.map((r) => {
        const n = (attempts.get(r.url) ?? 0) + 1;
        attempts.set(r.url, n);
        return { id: r.id, ...answer(r.url, n) };
      });
      return { status: 200, headers: {}, text: '', body: { responses: responses.reverse() } };
    },
    async acquire(charge: BudgetCharge) {
      acquired.push(charge);
    },
    async innerThrottled(_api: string, charge: BudgetCharge, t: { retryAfter: number | undefined }) {
      throttled.push({ charge, retryAfter: t.retryAfter });
    },
  };
  const ctx = {
    tenantId: 'tenant-1',
    http,
    cloud: { graph: { baseUrl: 'https://graph.microsoft.com', resource: 'https://graph.microsoft.com' } },
    tokens: { bearer: () => async () => 'token' },
    logger: { debug() {} },
  } as unknown as StreamContext;
  return { ctx, sent, acquired, throttled, attempts };
}

const ok: BatchAnswer = { status: 200, body: { value: [] } };

describe('Graph $batch with throttling budgets', () => {
  it('charges each batch the sum of its inner requests to their own services before sending', async () => {
    const g = scriptedGraph(() => ok);
    const items: BatchItem<number>[] = Array.from({ length: 25 }, (_, i) => ({ url: `/users/u${i}/teamwork/installedApps`, tag: i }));
    // No item names its service: each is charged by its path (graphBudgetOf), as single requests are.
    items.push(
      { url: '/users?$select=id', tag: 97 },
      { url: '/groups/g1/transitiveMembers', tag: 98 },
      { url: '/copilot/users/u1/interactionHistory/getAllEnterpriseInteractions', tag: 99 },
    );
    const handled: number[] = [];
    await runBatch(g.ctx, items, (item) => {
      handled.push(item.tag);
    });
    // 20 Teams reads take 20 Teams units; the next batch 5 Teams units, and apart the directory reads' resource units
    // (users with $select 1, transitiveMembers 5) and the Copilot read's unit of Graph's global limit.
    expect(g.sent.map((s) => [s.service, s.cost, s.urls.length])).toEqual([
      ['graphTeams', 20, 20],
      ['graphTeams', 5, 8],
    ]);
    expect(g.acquired).toEqual([
      { service: 'graphIdentity', tenantId: 'tenant-1', cost: 6 },
      { service: 'graph', tenantId: 'tenant-1', cost: 1 },
    ]);
    expect(handled.sort((a, b) => a - b)).toEqual([...Array.from({ length: 25 }, (_, i) => i), 97, 98, 99]);
  });

  it('an inner request throttled many times in a row is paced through its budget and read in the end, never failed', async () => {
    // One user's read is answered 429 fifteen times (the old helper gave up after 8), with the inner Retry-After.
    const g = scriptedGraph((url, n) =>
      url.includes('/u3/') && n <= 15 ? { status: 429, headers: { 'Retry-After': '2.5' }, body: { error: { code: 'TooManyRequests' } } } : ok,
    );
    const items: BatchItem<number>[] = Array.from({ length: 5 }, (_, i) => ({ url: `/users/u${i}/teamwork/installedApps`, tag: i }));
    const handled: number[] = [];
    await runBatch(g.ctx, items, (item, answer) => {
      expect(answer.status).toBe(200);
      handled.push(item.tag);
    });
    expect(handled.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(g.attempts.get('/users/u3/teamwork/installedApps')).toBe(16);
    // Each 429 penalized the Teams budget of the tenant with the inner Retry-After; each retry was charged again.
    expect(g.throttled).toHaveLength(15);
    expect(g.throttled.every((t) => t.charge.service === 'graphTeams' && t.charge.tenantId === 'tenant-1' && t.retryAfter === 2.5)).toBe(true);
    expect(g.sent.slice(1).every((s) => s.service === 'graphTeams' && s.cost === 1)).toBe(true);
  });

  it('other inner errors are handed to the caller after a few tries', async () => {
    const g = scriptedGraph((url) => (url.includes('/u1/') ? { status: 504 } : ok));
    const statuses: number[] = [];
    await runBatch(g.ctx, [{ url: '/users/u1/teamwork/installedApps', tag: 1 }], (_item, answer) => {
      statuses.push(answer.status);
    });
    expect(statuses).toEqual([504]);
    expect(g.throttled).toEqual([]);
  }, 30_000);
});

describe('Graph service by path', () => {
  it.each([
    ['https://graph.microsoft.com/v1.0/users/delta?$select=id', 'graphIdentity', 1],
    ['https://graph.microsoft.com/v1.0/users', 'graphIdentity', 2],
    ['/groups/g1/transitiveMembers?$select=id', 'graphIdentity', 4],
    ['/me/memberOf', 'graphIdentity', 1],
    ['/applications?$expand=owners', 'graphIdentity', 3],
    ['/users/u1/teamwork/installedApps?$expand=teamsAppDefinition', 'graphTeams', 1],
    ['/groups/g1/team', 'graphTeams', 1],
    ['/appCatalogs/teamsApps', 'graphTeams', 1],
    ['/users/u1/messages', 'graph', 1],
    ['/security/alerts_v2', 'graph', 1],
    ['https://graph.microsoft.com/beta/copilot/users/u1/interactionHistory/getAllEnterpriseInteractions', 'graph', 1],
  ])('%s → %s, %d unit(s)', (url, service, cost) => {
    expect(graphBudgetOf(url)).toEqual({ service, cost });
  });
});
