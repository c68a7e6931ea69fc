import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateTenant, type TenantSizes } from '../../emulator/generate.ts';
import { startEmulator } from '../../emulator/index.ts';

/** Options of {@link runEmulator}. */
export interface EmulatorRunOptions {
  port?: number;
  seed?: string;
  sizes?: Partial<TenantSizes>;
  /** Folder for endpoints.json, ca.pem and the connector secret. @default ./.vigil/emulator */
  dir?: string;
  print: (line: string) => void;
}

/**
 * `vigil emulator`: serves a generated tenant until SIGINT/SIGTERM and writes what a client needs to reach it: the
 * endpoints file (for VIGIL_ENDPOINTS_FILE), the CA certificate, and the connector app's (emulated) client secret
 * in a 0600 file, so it never has to be printed.
 */
export async function runEmulator(options: EmulatorRunOptions): Promise<void> {
  const dir = resolve(options.dir ?? join('.vigil', 'emulator'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tenant = generateTenant({ seed: options.seed ?? '42', sizes: options.sizes });
  const emulator = await startEmulator({ tenants: [tenant], port: options.port });
  const endpoints = emulator.writeEndpointsFile(dir);
  const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
  const secretFile = join(dir, 'connector-secret');
  writeFileSync(secretFile, app.secrets[0]!.value, { mode: 0o600 });
  options.print(
    [
      `Emulated Microsoft cloud at ${emulator.url} (control API: ${emulator.url}/_emulator/)`,
      `Tenant ${tenant.displayName}: ${tenant.id} (${tenant.domains[0]})`,
      `Connector application (client) ID: ${app.appId}`,
      '',
      'Onboard it from another shell:',
      `  export VIGIL_ENDPOINTS_FILE=${endpoints}`,
      `  export VIGIL_CLIENT_SECRET="$(cat ${secretFile})"`,
      `  npx vigil integrations add --mode customer-app --tenant-id ${tenant.id} --client-id ${app.appId} --client-secret-env VIGIL_CLIENT_SECRET`,
      '',
      'Press Ctrl+C to stop.',
    ].join('\n'),
  );
  await new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  await emulator.close();
}
