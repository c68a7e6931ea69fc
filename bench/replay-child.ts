/**
 * Baseline of bench/collect.ts: the requests Vigil made in its first collection (the emulator's request log, with
 * bodies and the headers that shape the answer), replayed by the plainest client — Node's fetch, a token per
 * resource from the client-credentials grant, `concurrency` requests in flight in log order — either reading each
 * answer and writing nothing (`fetch`), or also upserting every object of every page into SQLite through
 * better-sqlite3 with one prepared statement and one transaction per page (`sqlite`): the floor of the wire and the
 * ceiling of the store, measured in the same run as Vigil.
 *
 * Run by bench/collect.ts: node bench/replay-child.ts <requests.json> <endpoints.json> <tenantId> <clientId> <mode> <db> <concurrency>
 * (client secret in BENCH_SECRET; NODE_EXTRA_CA_CERTS = the emulator CA). Prints one JSON line: requests, statuses,
 * objects written, bytes read.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

interface Logged {
  method: string;
  service: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}
interface Endpoints {
  authorityHost: string;
  graph: { baseUrl: string; resource: string };
  bap: { baseUrl: string; resource: string };
  powerApps: { baseUrl: string; resource: string };
  flow: { baseUrl: string; resource: string };
  powerBi: { baseUrl: string; resource: string };
  arm: { baseUrl: string; resource: string };
  managementActivity: { baseUrl: string; resource: string };
}

const [requestsFile, endpointsFile, tenantId, clientId, mode, dbPath, concurrencyArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const requests = JSON.parse(readFileSync(requestsFile, 'utf8')) as Logged[];
const ep = JSON.parse(readFileSync(endpointsFile, 'utf8')) as Endpoints;
const origin = new URL(ep.authorityHost).origin;

const tokens = new Map<string, Promise<string>>();
function token(resource: string): Promise<string> {
  let t = tokens.get(resource);
  if (!t) {
    t = fetch(`${ep.authorityHost}/${tenantId}/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: process.env.BENCH_SECRET!,
        scope: `${resource}/.default`,
      }),
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    tokens.set(resource, t);
  }
  return t;
}

/** The token audience of a logged request (Dataverse: the instance in its path). */
function resourceOf(r: Logged): string {
  if (r.service === 'dataverse') return `${origin}${/^\/dataverse\/[^/]+/.exec(r.path)![0]}`;
  const service = r.service as keyof Endpoints;
  return (ep[service] as { resource: string }).resource;
}

const db = mode === 'sqlite' ? new Database(dbPath) : null;
db?.pragma('journal_mode = WAL');
db?.pragma('synchronous = NORMAL');
db?.exec('create table if not exists objects (kind text not null, id text not null, json text not null, primary key (kind, id)) without rowid');
const upsert = db?.prepare('insert into objects (kind, id, json) values (?, ?, ?) on conflict (kind, id) do update set json = excluded.json');
/** Writes one page's objects, each under its own key: the request it came from (and the inner answer of a `$batch`) and its id. */
const writePage = db?.transaction((objects: { kind: string; item: unknown }[]) => {
  objects.forEach(({ kind, item }, i) => {
    const o = item as Record<string, unknown>;
    upsert!.run(kind, String(o.id ?? o.name ?? o.appId ?? i), JSON.stringify(item));
  });
});

/** The objects of an answer: an OData page's `value`, each inner answer's `value` of a `$batch`, a scan's workspaces. */
function objectsOf(json: unknown, kind: string): { kind: string; item: unknown }[] {
  const o = json as Record<string, unknown>;
  const each = (items: unknown[]) => items.map((item) => ({ kind, item }));
  if (Array.isArray(o.value)) return each(o.value);
  if (Array.isArray(o.responses)) return o.responses.flatMap((r: { id?: string; body?: unknown }) => (r.body ? objectsOf(r.body, `${kind}#${r.id}`) : []));
  if (Array.isArray(o.workspaces)) return each(o.workspaces);
  if (Array.isArray(o.activityEventEntities)) return each(o.activityEventEntities);
  return each([json]);
}

const statuses: Record<string, number> = {};
let objects = 0;
let bytes = 0;
let next = 0;
async function worker(): Promise<void> {
  for (;;) {
    const index = next++;
    const r = requests[index];
    if (!r) return;
    const headers: Record<string, string> = { ...r.headers, authorization: `Bearer ${await token(resourceOf(r))}` };
    const res = await fetch(`${origin}${r.path}`, { method: r.method, headers, ...(r.body !== undefined ? { body: r.body } : {}) });
    const text = await res.text();
    bytes += Buffer.byteLength(text);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (!res.ok || !text) continue;
    const json = JSON.parse(text) as unknown;
    if (writePage) {
      const items = objectsOf(json, `${index}`);
      writePage(items);
      objects += items.length;
    }
  }
}
await Promise.all(Array.from({ length: Number(concurrencyArg) }, worker));
db?.close();
process.stdout.write(JSON.stringify({ requests: requests.length, statuses, objects, bytes }) + '\n');
