import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_CLOUD } from '../../src/config/cloud.ts';
import { VigilError } from '../../src/core/errors.ts';
import { HttpClient } from '../../src/platform/http/client.ts';
import { FOREIGN_LINK, LinkPolicy } from '../../src/platform/http/links.ts';
import { silentLogger } from '../../src/platform/log/index.ts';

const publicLinks = LinkPolicy.fromProfile(PUBLIC_CLOUD);

describe('link policy of the public cloud', () => {
  it('lets a Graph token go to Graph, with any path and query', () => {
    expect(publicLinks.allows('graph', 'https://graph.microsoft.com/v1.0/users/delta?$deltatoken=abc')).toBe(true);
    expect(publicLinks.allows('graph', 'https://GRAPH.microsoft.com:443/v1.0/users')).toBe(true);
  });

  it.each([
    ['a look-alike host', 'https://graph.microsoft.com.evil.example/v1.0/users'],
    ['plain http', 'http://graph.microsoft.com/v1.0/users'],
    ['userinfo that hides the real host', 'https://graph.microsoft.com@evil.example/v1.0/users'],
    ['userinfo before the right host', 'https://evil@graph.microsoft.com/v1.0/users'],
    ['another port', 'https://graph.microsoft.com:8443/v1.0/users'],
    ['another API of the same cloud', 'https://management.azure.com/subscriptions'],
    ['a relative link', '/v1.0/users'],
    ['no URL at all', 'not a url'],
  ])('refuses a Graph token for %s', (_why, url) => {
    expect(publicLinks.allows('graph', url)).toBe(false);
    expect(() => publicLinks.check('graph', url, '@odata.nextLink')).toThrow(VigilError);
  });

  it('keeps each API on its own host', () => {
    expect(publicLinks.allows('arm', 'https://management.azure.com/subscriptions?api-version=2022-12-01')).toBe(true);
    expect(publicLinks.allows('managementActivity', 'https://manage.office.com/api/v1.0/t/activity/feed/audit/x')).toBe(true);
    expect(publicLinks.allows('managementActivity', 'https://graph.microsoft.com/v1.0/users')).toBe(false);
    expect(publicLinks.allows('powerBi', 'https://api.powerbi.com/v1.0/myorg/admin/activityevents?continuationToken=%27x%27')).toBe(true);
    expect(publicLinks.allows('identity', 'https://login.microsoftonline.com/common/discovery/instance')).toBe(true);
    expect(publicLinks.allows('identity', 'https://login.microsoftonline.com.evil.example/t/oauth2/v2.0/token')).toBe(false);
  });

  it('matches the Dataverse suffix .dynamics.com only at a label boundary, on https and the default port', () => {
    expect(publicLinks.allows('dataverse', 'https://contoso.crm.dynamics.com/api/data/v9.2/bots')).toBe(true);
    expect(publicLinks.allows('dataverse', 'https://Contoso.CRM4.Dynamics.com')).toBe(true);
    for (const url of [
      'https://evildynamics.com/api/data/v9.2/bots',
      'https://dynamics.com/api/data/v9.2/bots',
      'https://contoso.crm.dynamics.com.evil.example/api',
      'https://contoso.crm.dynamics.com@evil.example/api',
      'http://contoso.crm.dynamics.com/api',
      'https://contoso.crm.dynamics.com:8443/api',
    ]) {
      expect(publicLinks.allows('dataverse', url), url).toBe(false);
    }
    // A Dataverse host is no Graph host, and the other way round.
    expect(publicLinks.allows('graph', 'https://contoso.crm.dynamics.com/api')).toBe(false);
    expect(publicLinks.allows('dataverse', 'https://graph.microsoft.com/v1.0/users')).toBe(false);
  });

  it('reads a suffix written without its leading dot the same way', () => {
    const links = new LinkPolicy({ bases: {}, dataverseHostSuffixes: ['dynamics.com'] });
    expect(links.allows('dataverse', 'https://org.crm.dynamics.com')).toBe(true);
    expect(links.allows('dataverse', 'https://evildynamics.com')).toBe(false);
  });
});

describe('link policy with path prefixes (a custom profile, such as the emulator)', () => {
  const links = new LinkPolicy({ bases: { graph: ['https://127.0.0.1:9443/graph'], dataverse: ['https://127.0.0.1:9443/dataverse/'] } });

  it('allows only under the base path, at a segment boundary, after normalising dot segments', () => {
    expect(links.allows('graph', 'https://127.0.0.1:9443/graph/v1.0/users')).toBe(true);
    expect(links.allows('dataverse', 'https://127.0.0.1:9443/dataverse/org1/api/data/v9.2/bots')).toBe(true);
    expect(links.allows('graph', 'https://127.0.0.1:9443/graphs/v1.0/users')).toBe(false);
    expect(links.allows('graph', 'https://127.0.0.1:9443/graph/../bap/x')).toBe(false);
    expect(links.allows('graph', 'https://127.0.0.1:9443/graph/%2e%2e/bap/x')).toBe(false);
    expect(links.allows('dataverse', 'https://127.0.0.1:9443/dataverse-evil/org1')).toBe(false);
    expect(links.allows('dataverse', 'https://127.0.0.1:94430/dataverse/org1')).toBe(false);
    expect(links.allows('dataverse', 'https://127.0.0.2:9443/dataverse/org1')).toBe(false);
  });

  it('allows nothing for an API it does not name', () => {
    expect(links.allows('arm', 'https://127.0.0.1:9443/graph/v1.0/users')).toBe(false);
  });
});

describe('the refusal', () => {
  it('is one code, kind upstream, naming the API, the link and the origin only (never the path or query)', () => {
    const err = (() => {
      try {
        publicLinks.check('graph', 'https://evil.example:8443/v1.0/users/delta?$deltatoken=SECRET-SKIP', '@odata.deltaLink');
      } catch (e) {
        return e as VigilError;
      }
      throw new Error('not refused');
    })();
    expect(err).toMatchObject({
      kind: 'upstream',
      code: FOREIGN_LINK,
      field: '@odata.deltaLink',
      detail: { api: 'graph', origin: 'https://evil.example:8443' },
    });
    expect(err.message).toContain('Microsoft Graph');
    expect(err.message).toContain('https://evil.example:8443');
    expect(JSON.stringify(err.toJSON())).not.toMatch(/SECRET-SKIP|deltatoken|\/v1\.0\/users/);
    expect(err.remediation).toMatch(/VIGIL_ENDPOINTS_FILE/);
  });

  it('shows the real host, not the userinfo, of a disguised link', () => {
    expect(() => publicLinks.check('graph', 'https://graph.microsoft.com:secret@evil.example/x', 'nextLink')).toThrow(/https:\/\/evil\.example/);
    expect(() => publicLinks.check('graph', 'https://graph.microsoft.com:secret@evil.example/x', 'nextLink')).not.toThrow(/secret/);
  });
});

describe('the HTTP pipeline enforces the policy', () => {
  let server: Server;
  let allowed: string;
  let foreign: string;
  const authorizations: (string | undefined)[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      authorizations.push(req.headers.authorization);
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    allowed = `http://127.0.0.1:${port}`;
    // The same server under another name: reachable, but not a Graph host of this policy.
    foreign = `http://localhost:${port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses a request to a foreign host before the token is asked for, and sends nothing', async () => {
    const http = new HttpClient({ links: new LinkPolicy({ bases: { graph: [allowed] } }), logger: silentLogger(), sleepMs: async () => undefined });
    let tokenCalls = 0;
    const token = async () => {
      tokenCalls++;
      return 'graph-token';
    };
    try {
      await expect(http.send({ api: 'graph', url: `${foreign}/v1.0/users`, token })).rejects.toMatchObject({ code: FOREIGN_LINK });
      // A Graph token to the allowed host of another API is refused too.
      await expect(http.send({ api: 'arm', url: `${allowed}/subscriptions`, token })).rejects.toMatchObject({ code: FOREIGN_LINK });
      expect(tokenCalls).toBe(0);
      expect(authorizations).toEqual([]);
      // The control: the allowed host gets the request and the token, so the counter above can see one.
      await http.send({ api: 'graph', url: `${allowed}/v1.0/users`, token });
      expect(tokenCalls).toBe(1);
      expect(authorizations).toEqual(['Bearer graph-token']);
    } finally {
      await http.close();
    }
  });
});
