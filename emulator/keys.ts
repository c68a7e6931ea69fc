/**
 * Key material generated at emulator start: the HTTPS server certificate and the token-signing key.
 */
import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { generate } from 'selfsigned';

/** The HTTPS server identity. `cert` is also the CA a client must trust (self-signed). PEM strings. */
export interface TlsMaterial {
  key: string;
  cert: string;
}

/**
 * The token-signing key and its public JWK as published at `/{tenant}/discovery/v2.0/keys`
 * (https://learn.microsoft.com/entra/identity-platform/access-tokens#validate-the-signature):
 * `kid` = `x5t` = base64url SHA-1 thumbprint of the DER certificate, `x5c` = [base64 DER].
 */
export interface SigningMaterial {
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
  x5t: string;
  x5c: string[];
  /** RSA modulus and exponent, base64url (JWK `n`, `e`). */
  n: string;
  e: string;
}

/**
 * Generates a self-signed TLS certificate (RSA 2048, SHA-256) valid for 30 days with SAN IP 127.0.0.1, IP ::1 and
 * DNS localhost. Clients trust it by passing the PEM as their only CA (e.g. undici `new Agent({ connect: { ca } })`).
 */
export async function generateTlsMaterial(): Promise<TlsMaterial> {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: 'Vigil Microsoft cloud emulator' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 30 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * Generates the RS256 token-signing key with a self-signed certificate (CN `accounts.accesscontrol.windows.net`, as
 * Entra's signing certificates are) so that JWKS can carry `x5c` and `x5t`.
 */
export async function generateSigningMaterial(): Promise<SigningMaterial> {
  const pems = await generate([{ name: 'commonName', value: 'accounts.accesscontrol.windows.net' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 365 * 86_400_000),
  });
  const privateKey = createPrivateKey(pems.private);
  const publicKey = createPublicKey(pems.private);
  const der = new X509Certificate(pems.cert).raw;
  const x5t = createHash('sha1').update(der).digest('base64url');
  const jwk = publicKey.export({ format: 'jwk' });
  if (typeof jwk.n !== 'string' || typeof jwk.e !== 'string') throw new Error('signing key is not RSA');
  return { privateKey, publicKey, kid: x5t, x5t, x5c: [der.toString('base64')], n: jwk.n, e: jwk.e };
}
