/**
 * Baseline of bench/directory.ts: the official Microsoft Graph JavaScript SDK (`@microsoft/microsoft-graph-client` 3,
 * https://learn.microsoft.com/graph/sdks/sdks-overview) authenticated by `@azure/identity`'s `ClientSecretCredential`
 * (https://learn.microsoft.com/javascript/api/@azure/identity/clientsecretcredential), reading the directory the way
 * the SDK's documentation pages do — users, groups, then each group's members, every page through `PageIterator`
 * (https://learn.microsoft.com/graph/sdks/paging) — and writing each object into SQLite through better-sqlite3 (one
 * prepared statement per table, one transaction per page). Groups' members are read 4 groups at a time, as Vigil
 * reads 4 slices at a time.
 *
 * Run by bench/directory.ts: node bench/sdk-child.ts <endpoints.json> <tenantId> <clientId> <db>
 * (client secret in BENCH_SECRET; NODE_EXTRA_CA_CERTS = the emulator CA). Prints one JSON line: the counts read and
 * `readSeconds`, from the first request (token included) to the last row written.
 */
import { readFileSync } from 'node:fs';
import { ClientSecretCredential } from '@azure/identity';
import { Client, PageIterator, type PageCollection } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import Database from 'better-sqlite3';

const [endpointsFile, tenantId, clientId, dbPath] = process.argv.slice(2) as [string, string, string, string];
const ep = JSON.parse(readFileSync(endpointsFile, 'utf8')) as { authorityHost: string; graph: { baseUrl: string; resource: string } };

const credential = new ClientSecretCredential(tenantId, clientId, process.env.BENCH_SECRET!, {
  authorityHost: ep.authorityHost,
  disableInstanceDiscovery: true,
});
const client = Client.initWithMiddleware({
  authProvider: new TokenCredentialAuthenticationProvider(credential, { scopes: [`${ep.graph.resource}/.default`] }),
  baseUrl: `${ep.graph.baseUrl}/`,
  defaultVersion: 'v1.0',
  // The SDK sends its token only to Graph's own hosts or the custom hosts named here (the emulator's hostname).
  customHosts: new Set([new URL(ep.graph.baseUrl).hostname]),
});

const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  create table users (id text primary key, json text not null) without rowid;
  create table groups (id text primary key, json text not null) without rowid;
  create table members (group_id text not null, member_id text not null, json text not null, primary key (group_id, member_id)) without rowid;
`);
const putUser = db.prepare('insert into users (id, json) values (?, ?) on conflict (id) do update set json = excluded.json');
const putGroup = db.prepare('insert into groups (id, json) values (?, ?) on conflict (id) do update set json = excluded.json');
const putMember = db.prepare(
  'insert into members (group_id, member_id, json) values (?, ?, ?) on conflict (group_id, member_id) do update set json = excluded.json',
);

type Item = Record<string, unknown> & { id: string };

/** Every page of a collection through the SDK's PageIterator, each page written in one transaction. */
async function readAll(path: string, write: (items: Item[]) => void): Promise<number> {
  let n = 0;
  let page: Item[] = [];
  const flush = db.transaction((items: Item[]) => write(items));
  const first = (await client.api(path).get()) as PageCollection;
  const it = new PageIterator(client, first, (item: Item) => {
    page.push(item);
    n++;
    if (page.length >= 999) {
      flush(page);
      page = [];
    }
    return true;
  });
  await it.iterate();
  flush(page);
  return n;
}

const started = performance.now();
const users = await readAll(
  '/users?$select=id,displayName,userPrincipalName,mail,accountEnabled,userType,createdDateTime,assignedLicenses&$top=999',
  (items) => {
    for (const u of items) putUser.run(u.id, JSON.stringify(u));
  },
);
const groupIds: string[] = [];
const groups = await readAll('/groups?$select=id,displayName,mail,securityEnabled,mailEnabled,groupTypes&$top=999', (items) => {
  for (const g of items) {
    putGroup.run(g.id, JSON.stringify(g));
    groupIds.push(g.id);
  }
});
let members = 0;
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (;;) {
      const id = groupIds[next++];
      if (id === undefined) return;
      const read = await readAll(`/groups/${id}/members?$select=id&$top=999`, (items) => {
        for (const m of items) putMember.run(id, m.id, JSON.stringify(m));
      });
      members += read;
    }
  }),
);
const readSeconds = (performance.now() - started) / 1000;
db.close();
process.stdout.write(JSON.stringify({ users, groups, members, readSeconds }) + '\n');
