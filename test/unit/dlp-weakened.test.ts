import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type AuditEvent } from '../../src/core/audit.ts';
import { normalizeRecord } from '../../src/sources/managementActivity/records.ts';
import { loadDetections } from '../../src/detections/index.ts';
import { detectionContext } from '../support/detections.ts';

/**
 * dlp_policy_weakened on DLP audit records (RecordType 187) built around the `AdditionalInfo` Microsoft Learn documents
 * for an update (test/fixtures/real/dlp/learn-dlp-update-additionalinfo.json, SOURCES.md there): the documented update
 * tightens the policy (near-miss); the same record with its two property changes running the other way weakens it.
 */

type Json = Record<string, unknown>;
const documented = (): Json => JSON.parse(readFileSync(new URL('../fixtures/real/dlp/learn-dlp-update-additionalinfo.json', import.meta.url), 'utf8')) as Json;

let n = 0;
/** A record with the envelope of the Learn page's "Base schema for DLP audit events" and the common schema. */
function record(operation: string, info: Json): AuditEvent {
  n++;
  const raw = {
    Id: `6f3c2a10-0000-4000-8000-${String(n).padStart(12, '0')}`,
    CreationTime: `2026-11-20T08:00:${String(n).padStart(2, '0')}`,
    Operation: operation,
    OrganizationId: 'b8c1d0e2-0000-4000-8000-000000000001',
    RecordType: 187,
    ResultStatus: 'Success',
    UserKey: '10032001A2B3C4D5',
    UserType: 2,
    Version: 1,
    Workload: 'PowerPlatform',
    ObjectId: info.policyId,
    UserId: 'admin@contoso.com',
    AdditionalInfo: JSON.stringify(info),
  };
  return normalizeRecord(raw, 'Audit.General')!;
}

const rule = loadDetections().find((d) => d.metadata.id === 'dlp_policy_weakened')!;
const run = (events: AuditEvent[]) => rule.run(detectionContext({ events }));

/** The documented update with one changed property set to `previous → current` and no connector moves. */
function withChange(name: string, previous: string, current: string, top: Json = {}): Json {
  const info = documented();
  const changeSet = info.changeSet as { changedProperties: Json[]; connectorChanges: Json[] };
  changeSet.changedProperties = [{ name, previousValue: previous, currentValue: current }];
  changeSet.connectorChanges = [];
  return { ...info, ...top };
}

describe('dlp_policy_weakened on documented DLP update records', () => {
  it('stays quiet on the documented update (rename, default General → Confidential, Only → Except, connectors to stricter groups)', async () => {
    expect(await run([record('UpdateDlpPolicy', documented())])).toEqual([]);
  });

  it('fires when the default group moves from Blocked to General', async () => {
    const hits = await run([
      record('UpdateDlpPolicy', withChange('DefaultConnectorClassification', 'Blocked', 'General', { defaultConnectorClassification: 'General' })),
    ]);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.title).toContain('default group Blocked → General');
    expect(hits[0]!.detail).toMatchObject({
      policyId: 'eb1e0480-0fe9-434e-9ad8-df4047a666ec',
      defaultConnectorClassification: { previous: 'Blocked', current: 'General' },
      scope: null,
    });
  });

  it('fires when the scope narrows from all environments to some (Only or Except), or from Except to Only', async () => {
    for (const [from, to] of [
      ['AllEnvironments', 'OnlyEnvironments'],
      ['AllEnvironments', 'ExceptEnvironments'],
      ['ExceptEnvironments', 'OnlyEnvironments'],
    ] as const) {
      const hits = await run([record('UpdateDlpPolicy', withChange('DlpPolicyType', from, to, { policyType: to }))]);
      expect(
        hits.map((h) => h.detail.scope),
        `${from} → ${to}`,
      ).toEqual([{ previous: from, current: to }]);
    }
  });

  it('stays quiet when the scope widens or the default group tightens', async () => {
    expect(
      await run([
        record('UpdateDlpPolicy', withChange('DlpPolicyType', 'OnlyEnvironments', 'AllEnvironments', { policyType: 'AllEnvironments' })),
        record('UpdateDlpPolicy', withChange('DlpPolicyType', 'ExceptEnvironments', 'AllEnvironments', { policyType: 'AllEnvironments' })),
        record('UpdateDlpPolicy', withChange('DefaultConnectorClassification', 'General', 'Blocked', { defaultConnectorClassification: 'Blocked' })),
      ]),
    ).toEqual([]);
  });
});
