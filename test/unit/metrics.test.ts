import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { register as globalRegistry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkPolicy } from '../../src/platform/http/links.ts';
import { HttpClient } from '../../src/platform/http/client.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { Metrics } from '../../src/platform/metrics/index.ts';
import { parseExposition, sampleSum, sampleValue } from '../support/metrics.ts';

describe('Metrics', () => {
  it('exposes every series with its type, labels and values in the text format', async () => {
    const m = new Metrics();
    m.upstreamResponse('graph', 200);
    m.upstreamResponse('graph', 200);
    m.upstreamResponse('graph', 429);
    m.upstreamResponse('bap', 'network_error');
    m.throttleWait('graph', 1.5);
    m.throttleWait('graph', 0.25);
    m.runStarted();
    m.runStarted();
    m.runFinished('partial', 42);
    m.eventsIngested('Audit.General', 25);
    m.eventsIngested('Audit.General', 5);
    m.eventsIngested('PowerBI.ActivityEvents', 0);
    m.apiRequest('get', '/api/v1/integrations/:id', 200);
    m.apiRequest('BREW', undefined, 404);

    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await m.text();
    expect(text).toContain('# TYPE vigil_upstream_requests_total counter');
    expect(text).toContain('# TYPE vigil_collection_run_duration_seconds histogram');
    expect(text).toContain('# TYPE vigil_collection_runs_running gauge');
    const s = parseExposition(text);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'graph', status: '200' })).toBe(2);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'graph', status: '429' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'bap', status: 'network_error' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_throttle_waits_total', { api: 'graph' })).toBe(2);
    expect(sampleValue(s, 'vigil_upstream_throttle_wait_seconds_total', { api: 'graph' })).toBe(1.75);
    // Every run status exists from the start (0), so rate() and alerts see it before the first occurrence.
    expect(sampleValue(s, 'vigil_collection_runs_total', { status: 'partial' })).toBe(1);
    for (const status of ['succeeded', 'failed', 'stopped']) expect(sampleValue(s, 'vigil_collection_runs_total', { status })).toBe(0);
    expect(sampleValue(s, 'vigil_collection_runs_running')).toBe(1);
    expect(sampleValue(s, 'vigil_collection_run_duration_seconds_count')).toBe(1);
    expect(sampleValue(s, 'vigil_collection_run_duration_seconds_sum')).toBe(42);
    expect(sampleValue(s, 'vigil_collection_run_duration_seconds_bucket', { le: '30' })).toBe(0);
    expect(sampleValue(s, 'vigil_collection_run_duration_seconds_bucket', { le: '60' })).toBe(1);
    expect(sampleValue(s, 'vigil_audit_events_ingested_total', { content_type: 'Audit.General' })).toBe(30);
    expect(sampleValue(s, 'vigil_audit_events_ingested_total', { content_type: 'PowerBI.ActivityEvents' })).toBe(0);
    expect(sampleValue(s, 'vigil_http_requests_total', { method: 'GET', route: '/api/v1/integrations/:id', status: '200' })).toBe(1);
    expect(sampleValue(s, 'vigil_http_requests_total', { method: 'OTHER', route: 'unmatched', status: '404' })).toBe(1);
    // Default process metrics, with the prefix.
    expect(s.some((x) => x.name === 'vigil_process_cpu_user_seconds_total')).toBe(true);
    expect(s.some((x) => x.name.startsWith('vigil_nodejs_'))).toBe(true);
    expect(s.every((x) => x.name.startsWith('vigil_'))).toBe(true);
  });

  it('keeps each instance in its own registry, never the global one', async () => {
    const a = new Metrics({ defaultMetrics: false });
    const b = new Metrics({ defaultMetrics: false });
    a.upstreamResponse('graph', 200);
    expect(sampleValue(parseExposition(await a.text()), 'vigil_upstream_requests_total', { api: 'graph', status: '200' })).toBe(1);
    expect(sampleValue(parseExposition(await b.text()), 'vigil_upstream_requests_total', { api: 'graph', status: '200' })).toBeUndefined();
    expect(globalRegistry.getSingleMetric('vigil_upstream_requests_total')).toBeUndefined();
    expect(parseExposition(await a.text()).some((x) => x.name.startsWith('vigil_process_'))).toBe(false);
  });
});

describe('Metrics through the HTTP pipeline', () => {
  let server: Server;
  let base: string;
  const hits = new Map<string, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const n = (hits.get(req.url!) ?? 0) + 1;
      hits.set(req.url!, n);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/throttled' && n === 1) {
        res.statusCode = 429;
        res.setHeader('retry-after', '0');
        return res.end(JSON.stringify({ error: { code: 'TooManyRequests', message: 'Too many requests' } }));
      }
      if (req.url === '/busy' && n === 1) {
        res.statusCode = 503;
        res.setHeader('retry-after', '0.05');
        return res.end(JSON.stringify({ error: { code: 'serviceNotAvailable', message: 'Try later' } }));
      }
      if (req.url === '/reset' && n === 1) return req.socket.destroy();
      res.end(JSON.stringify({ value: [] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('counts every answer, retried ones included, and every wait with its seconds', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    // This test's plain-HTTP server is the only host each API may reach.
    const links = new LinkPolicy({ bases: { graph: [base], dataverse: [base], bap: [base] } });
    const http = new HttpClient({ links, logger: silentLogger(), baseDelaySeconds: 0.01, metrics });
    try {
      expect((await http.send({ api: 'graph', url: `${base}/throttled` })).status).toBe(200);
      expect((await http.send({ api: 'dataverse', url: `${base}/busy` })).status).toBe(200);
      expect((await http.send({ api: 'bap', url: `${base}/reset` })).status).toBe(200);
    } finally {
      await http.close();
    }
    const text = await metrics.text();
    expect(text).toContain('vigil_upstream_requests_total{api="graph",status="429"} 1');
    const s = parseExposition(text);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'graph', status: '200' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_throttle_waits_total', { api: 'graph' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_throttle_wait_seconds_total', { api: 'graph' })).toBe(0);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'dataverse', status: '503' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'dataverse', status: '200' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_throttle_waits_total', { api: 'dataverse' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_throttle_wait_seconds_total', { api: 'dataverse' })).toBe(0.05);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'bap', status: 'network_error' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_requests_total', { api: 'bap', status: '200' })).toBe(1);
    expect(sampleValue(s, 'vigil_upstream_throttle_waits_total', { api: 'bap' })).toBe(1);
    expect(sampleSum(s, 'vigil_upstream_requests_total')).toBe(6);
    // The pipeline's own counters are unchanged by the metrics.
    expect(http.statsFor('graph')).toEqual({ requests: 2, retries: 1, throttled: 1, waitedSeconds: 0 });
    expect(http.statsFor('dataverse')).toMatchObject({ requests: 2, retries: 1, throttled: 0, waitedSeconds: 0.05 });
    // No URL, path or host ever becomes a label value.
    expect(text).not.toMatch(/127\.0\.0\.1|throttled|busy|reset/);
  });
});
