import { describe, expect, it } from 'vitest';
import type { ContainmentActionView } from '../../../src/contract/protection.ts';
import { ContainmentSessions } from '../../../src/reporting/containment.ts';

/**
 * The API's containment sign-ins in flight (src/reporting/containment.ts): kept in memory until their device code
 * expires, bounded in number, per organization and integration, and their polling stopped when dropped or closed.
 */
describe('ContainmentSessions', () => {
  const view = (id: string, integrationId = 'int_a'): ContainmentActionView => ({
    id,
    action: 'contain',
    status: 'awaiting-sign-in',
    integrationId,
    environmentId: 'env',
    agentId: 'agent',
    alertId: null,
    stepId: null,
    requestedBy: 'ann',
    signedInAs: null,
    requestedAt: '2026-11-26T00:00:00.000Z',
    quarantined: null,
    userCode: 'ABC',
    verificationUri: 'https://microsoft.com/devicelogin',
    expiresAt: null,
    error: null,
  });
  const entry = (id: string, dropAt: number, organizationId = 'org_a', integrationId = 'int_a') => ({
    view: view(id, integrationId),
    organizationId,
    dropAt,
    abort: new AbortController(),
  });

  it('shows an entry to its organization and integration only, newest first, until its code expires (then stops its polling)', () => {
    let now = 1000;
    const s = new ContainmentSessions({ now: () => now });
    const first = entry('ca_1', 2000);
    s.add(first);
    s.add(entry('ca_2', 5000));
    s.add(entry('ca_3', 5000, 'org_b'));
    s.add(entry('ca_4', 5000, 'org_a', 'int_b'));
    expect(s.of('org_a', 'int_a').map((v) => v.id)).toEqual(['ca_2', 'ca_1']);
    now = 2000;
    expect(s.of('org_a', 'int_a').map((v) => v.id)).toEqual(['ca_2']);
    s.add(entry('ca_5', 5000)); // makes room: drops the expired one and stops its polling
    expect(first.abort.signal.aborted).toBe(true);
  });

  it('an ended entry loses its code; when full, an ended entry makes room, and a full set of live sign-ins refuses a new one', () => {
    const s = new ContainmentSessions({ max: 2, now: () => 0 });
    s.add(entry('ca_1', 10));
    s.add(entry('ca_2', 10));
    expect(() => s.add(entry('ca_3', 10))).toThrow(expect.objectContaining({ code: 'CONTAINMENT_BUSY' }));
    s.end('ca_1', { status: 'succeeded', quarantined: true });
    expect(s.of('org_a', 'int_a').find((v) => v.id === 'ca_1')).toMatchObject({ status: 'succeeded', userCode: null, verificationUri: null });
    s.add(entry('ca_3', 10));
    expect(s.of('org_a', 'int_a').map((v) => v.id)).toEqual(['ca_3', 'ca_2']);
    const live = entry('ca_4', 10);
    s.close();
    s.add(live);
    s.close();
    expect(live.abort.signal.aborted).toBe(true);
    expect(s.of('org_a', 'int_a')).toEqual([]);
  });
});
