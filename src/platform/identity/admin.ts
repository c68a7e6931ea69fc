import { PublicClientApplication, LogLevel } from '@azure/msal-node';
import type { CloudProfile } from '../../config/cloud.ts';
import { VigilError } from '../../core/errors.ts';
import type { HttpClient } from '../http/client.ts';
import { aadstsError, PipelineNetworkModule, readUserClaims, type UserTokenClaims } from './index.ts';

/**
 * Delegated tokens of a platform administrator, for the one call only an administrator user may make: registering
 * the application as a Power Platform admin management application. The device-code flow is the default (it works
 * with MFA and Conditional Access); the resource-owner password grant of the seed's call 2 is offered for accounts
 * without MFA. The username and password are used once and never stored or logged.
 *
 * Sources: Microsoft identity platform "device authorization grant" (`v2-oauth2-device-code.md`) and "resource owner
 * password credentials" (`v2-oauth-ropc.md`: no MFA, no personal accounts); Power Platform "Create a service principal
 * application" (`powerplatform-api-create-service-principal.md`: the registration needs a user token);
 * terraform-provider-power-platform `docs/guides/app_registration.md` (Azure CLI first-party client id).
 */

/** Default public client: the Azure CLI first-party application (terraform-provider-power-platform app_registration.md). */
const DEFAULT_ADMIN_CLIENT_ID = '04b07795-8ddb-461a-bbee-02f9e1bf7b46';

/**
 * Default scope for the admin API: BAP's audience `https://service.powerapps.com/` with `.default` — a resource ID that
 * ends in a slash takes the documented double slash (`scopes-oidc.md`; Power Platform docs use
 * `https://service.powerapps.com//.default`).
 */
function defaultAdminScope(cloud: CloudProfile): string {
  return `${cloud.bap.resource.replace(/\/+$/, '')}//.default`;
}

/** How the administrator signs in. */
export type AdminSignIn =
  | {
      kind: 'device-code';
      /**
       * Shows Microsoft's message ("To sign in, use a web browser to open … and enter the code …"); `code` carries its
       * parts (the user code, the verification URI, and the seconds until the code expires) for a caller that shows them
       * its own way (the API). Never the device code itself, which only the polling client may hold.
       */
      prompt: (message: string, code: DeviceCodePrompt) => void;
      /** Stops the polling when aborted (the sign-in then fails with `ADMIN_SIGN_IN_FAILED`). */
      signal?: AbortSignal;
    }
  | { kind: 'password'; username: string; password: string };

/** The parts of a device-code prompt (MSAL `DeviceCodeResponse` without the device code). */
export interface DeviceCodePrompt {
  userCode: string;
  verificationUri: string;
  /** Seconds until the code expires. */
  expiresIn: number;
}

/** The device-code grant, its polling stopped when the sign-in's signal aborts (MSAL reads `cancel` at each poll). */
function acquireByDeviceCode(app: PublicClientApplication, scopes: string[], signIn: Extract<AdminSignIn, { kind: 'device-code' }>) {
  const request = {
    scopes,
    cancel: false,
    deviceCodeCallback: (r: { message: string; userCode: string; verificationUri: string; expiresIn: number }) =>
      signIn.prompt(r.message, { userCode: r.userCode, verificationUri: r.verificationUri, expiresIn: r.expiresIn }),
  };
  signIn.signal?.addEventListener('abort', () => (request.cancel = true), { once: true });
  return app.acquireTokenByDeviceCode(request);
}

/** Options of {@link acquireAdminToken}. */
export interface AdminTokenOptions {
  cloud: CloudProfile;
  http: HttpClient;
  tenantId: string;
  signIn: AdminSignIn;
  /** @default {@link DEFAULT_ADMIN_CLIENT_ID} */
  clientId?: string;
  /** @default {@link defaultAdminScope} */
  scope?: string;
}

const MFA_BLOCKS = new Set(['50076', '50079', '53003', '50158']);

/**
 * Signs a platform administrator in and returns a delegated token for the admin API.
 * @throws VigilError `AADSTS50076`/`50079`/`53003` saying MFA or Conditional Access blocks the password grant and to
 *   use the device code; `AADSTS50126` for a wrong username or password; `DEVICE_CODE_DECLINED` / `…_EXPIRED`.
 */
export async function acquireAdminToken(options: AdminTokenOptions): Promise<{ accessToken: string; claims: UserTokenClaims }> {
  const { cloud, signIn } = options;
  const app = new PublicClientApplication({
    auth: {
      clientId: options.clientId ?? DEFAULT_ADMIN_CLIENT_ID,
      authority: `${cloud.authorityHost}/${options.tenantId}`,
      ...(cloud.name === 'public' ? {} : { knownAuthorities: [new URL(cloud.authorityHost).host] }),
    },
    system: {
      networkClient: new PipelineNetworkModule(options.http),
      loggerOptions: { logLevel: LogLevel.Error, piiLoggingEnabled: false, loggerCallback: () => undefined },
    },
  });
  const scopes = [options.scope ?? defaultAdminScope(cloud)];
  let result;
  try {
    result =
      signIn.kind === 'device-code'
        ? await acquireByDeviceCode(app, scopes, signIn)
        : await app.acquireTokenByUsernamePassword({ scopes, username: signIn.username, password: signIn.password });
  } catch (e) {
    const err = e as { errorCode?: string; errorMessage?: string; message?: string };
    const text = `${err.errorMessage ?? ''} ${err.message ?? ''}`;
    const code = /AADSTS(\d+)/.exec(text)?.[1];
    if (code && MFA_BLOCKS.has(code) && signIn.kind === 'device-code') {
      throw new VigilError(`AADSTS${code}`, `A Conditional Access or MFA policy blocks this sign-in (AADSTS${code}).`, {
        remediation: (_, act) => `Sign in from a device your policies allow, or have the administrator ${act({ do: 'registerManagementAppPowerShell' })}.`,
        cause: e,
      });
    }
    if (code && MFA_BLOCKS.has(code)) {
      throw new VigilError(
        `AADSTS${code}`,
        `Multi-factor authentication or Conditional Access blocks the password sign-in of ${signIn.kind === 'password' ? signIn.username : 'this account'} (AADSTS${code}).`,
        {
          field: 'adminPassword',
          remediation: (name) =>
            `Run the command again without ${name('adminUsername')}/${name('adminPassword')}: the device-code sign-in (the default) works with MFA and Conditional Access.`,
          cause: e,
        },
      );
    }
    if (code === '50126') {
      throw new VigilError('AADSTS50126', 'The username or password is wrong (AADSTS50126).', {
        field: 'adminUsername',
        cause: e,
      });
    }
    if (err.errorCode === 'authorization_declined')
      throw new VigilError('DEVICE_CODE_DECLINED', 'The sign-in was declined in the browser.', {
        cause: e,
      });
    if (err.errorCode === 'expired_token' || code === '70019')
      throw new VigilError('DEVICE_CODE_EXPIRED', 'The device code expired before the sign-in finished (15 minutes).', {
        cause: e,
      });
    if (code) throw aadstsError(code, text.slice(text.indexOf(`AADSTS${code}`)), e);
    throw new VigilError('ADMIN_SIGN_IN_FAILED', `The administrator sign-in failed: ${(err.errorMessage ?? err.message ?? '').split(/\r?\n/)[0]}`, {
      cause: e,
    });
  }
  if (!result?.accessToken) throw new VigilError('ADMIN_SIGN_IN_FAILED', 'The administrator sign-in returned no token.');
  return { accessToken: result.accessToken, claims: readUserClaims(result.accessToken) };
}
