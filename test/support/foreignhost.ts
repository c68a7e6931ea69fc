import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/**
 * A host that is not Microsoft's: an HTTPS listener on another loopback address (Linux routes all of 127.0.0.0/8 to
 * `lo`) with its own certificate, which the tests let Vigil trust — so a request Vigil decides to send there really
 * arrives, and the counter below would see its token. It answers every request 200 with an empty OData page, the
 * answer an attacker would give to be taken as data.
 */
export interface ForeignHost {
  /** `https://127.0.0.2:PORT`. */
  origin: string;
  /** PEM of its self-signed certificate (to append to the profile's CA). */
  caPem: string;
  /** Every request received: method, path and the Authorization header (undefined when none). */
  requests: { method: string; path: string; authorization: string | undefined }[];
  /** Requests that carried an Authorization header. */
  tokens(): number;
  close(): Promise<void>;
}

/** Starts the foreign host on `address` (default 127.0.0.2), port chosen by the system. */
export async function startForeignHost(address = '127.0.0.2'): Promise<ForeignHost> {
  const pems = await generate([{ name: 'commonName', value: 'not Microsoft' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 60_000),
    notAfterDate: new Date(Date.now() + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: address }] },
    ],
  });
  const requests: ForeignHost['requests'] = [];
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ value: [] }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://${address}:${port}`,
    caPem: pems.cert,
    requests,
    tokens: () => requests.filter((r) => r.authorization !== undefined).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
