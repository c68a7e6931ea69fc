import type { CloudProfile } from '../../config/cloud.ts';
import { VigilError } from '../../core/errors.ts';
import type { ApiName } from './client.ts';

/**
 * The one link policy of Vigil (DESIGN.md, "Trust rules: Links"): every URL that Vigil sends a request to, follows
 * or stores — next and delta links, `NextPageUri`, `contentUri`, `continuationUri`, Dataverse `instanceUrl`, cursors
 * saved in checkpoints — must lie on a host of the cloud profile for the API it belongs to. A bearer token for one API
 * never leaves that API's hosts.
 *
 * Rules, per API (`ApiName`):
 * - `graph`, `bap`, `powerApps`, `flow`, `powerPlatform`, `managementActivity`, `powerBi`, `arm`: the profile's `baseUrl` of that API
 *   (same scheme, host and port; and, when the base URL has a path, under that path at a segment boundary);
 * - `identity`: the profile's `authorityHost`;
 * - `dataverse`: https on the default port with a host ending in one of `dataverseHostSuffixes` at a label boundary
 *   (`.dynamics.com` allows `org.crm.dynamics.com`, never `evildynamics.com` nor `dynamics.com.evil.example`), or
 *   under one of `dataverseUrlPrefixes` (same origin, path at a segment boundary).
 * A URL with user information (`https://graph.microsoft.com@evil.example`, `https://x@graph.microsoft.com`) or one
 * that does not parse is refused. The profile's base URLs are https (the endpoints-file schema enforces it), so plain
 * http is refused too.
 *
 * The {@link HttpClient} checks every request it sends against this policy before it asks for a token; sources call
 * {@link LinkPolicy.check} on every link they hand to the sync engine to store, so a foreign link is refused before
 * it is stored, not only when it is followed. Either way the error is {@link FOREIGN_LINK}.
 *
 * Sources: WHATWG URL Standard (origin, userinfo, path normalisation — Node's `URL`); Microsoft Graph "Paging"
 * (`concepts/paging.md`: follow `@odata.nextLink` as given, on the Graph host) and "Delta query" (`delta-query-overview.md`);
 * Office 365 Management Activity API reference (`NextPageUri`, `contentUri` on `manage.office.com`); Power BI
 * "Admin - Get Activity Events" (`continuationUri` on `api.powerbi.com`); Power Platform environments list
 * (`linkedEnvironmentMetadata.instanceUrl` on `*.dynamics.com`).
 */

/** Code of every refusal of the link policy. */
export const FOREIGN_LINK = 'FOREIGN_LINK';

/** Names of the APIs as people know them, for messages. */
const API_NAMES: Record<ApiName, string> = {
  identity: 'Microsoft Entra ID',
  graph: 'Microsoft Graph',
  bap: 'the Power Platform admin API (BAP)',
  powerApps: 'the Power Apps admin API',
  flow: 'the Power Automate admin API',
  powerPlatform: 'the Power Platform API',
  dataverse: 'Dataverse',
  managementActivity: 'the Office 365 Management Activity API',
  powerBi: 'the Power BI REST API',
  arm: 'Azure Resource Manager',
};

/** An allowed place: an origin and a path prefix (`''` = the whole origin). */
interface Base {
  origin: string;
  /** Path without a trailing slash, e.g. `/graph`; `''` for none. */
  path: string;
}

function baseOf(url: string): Base {
  const u = new URL(url);
  return { origin: u.origin, path: u.pathname.replace(/\/+$/, '') };
}

function under(u: URL, base: Base): boolean {
  if (u.origin !== base.origin) return false;
  return base.path === '' || u.pathname === base.path || u.pathname.startsWith(`${base.path}/`);
}

/** What a policy allows, per API: base URLs, and for Dataverse host suffixes too. */
export interface LinkPolicyRules {
  /** Base URLs per API (scheme, host, port and an optional path prefix). An API absent here allows nothing. */
  bases: Partial<Record<ApiName, string[]>>;
  /** Dataverse host suffixes (`.dynamics.com`), matched at a label boundary on https and the default port. */
  dataverseHostSuffixes?: string[];
  /** Name of the profile, for messages. @default 'custom' */
  profileName?: string;
}

/**
 * Parses a URL for display: its origin only (never user information, path or query, which may carry skip tokens or
 * codes), or a placeholder when it does not parse.
 */
function linkOrigin(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? 'a URL without a host' : origin;
  } catch {
    return 'a URL that does not parse';
  }
}

/**
 * The error for a link refused by the policy: kind `upstream`, code {@link FOREIGN_LINK}, naming the API, the link
 * (`field`, e.g. `@odata.deltaLink`) and the foreign origin — never the path or query string. `why` replaces the
 * default reason ("not a host of the API") when the origin is right but the link is still unusable.
 */
export function foreignLinkError(api: ApiName, url: string, what: string, profileName: string, why?: string): VigilError {
  const origin = linkOrigin(url);
  return new VigilError(
    FOREIGN_LINK,
    `${API_NAMES[api]}: refused ${what} pointing at ${origin}, ${why ?? `which is not a ${api} host of the cloud profile '${profileName}'`}; no token was sent there and the link was not stored.`,
    {
      field: what,
      remediation: `Vigil only sends a ${api} token to the ${api} hosts of its cloud profile. If ${origin} really serves ${api} for this tenant, set VIGIL_CLOUD or an endpoints file (VIGIL_ENDPOINTS_FILE) that names it. Otherwise treat it as an attempt to redirect Vigil's credentials: check the network path to Microsoft and who can write Vigil's database. A refused stored link is dropped, so the next collection reads this stream from the start.`,
      detail: { api, origin, link: what },
    },
  );
}

/**
 * The link policy built from a cloud profile (see the module comment). Immutable; one per HTTP pipeline.
 */
export class LinkPolicy {
  readonly profileName: string;
  readonly #bases: Map<ApiName, Base[]>;
  readonly #suffixes: string[];

  constructor(rules: LinkPolicyRules) {
    this.profileName = rules.profileName ?? 'custom';
    this.#bases = new Map(Object.entries(rules.bases).map(([api, urls]) => [api as ApiName, (urls ?? []).map(baseOf)]));
    // `.dynamics.com` and `dynamics.com` mean the same: hosts *below* that domain, at a label boundary.
    this.#suffixes = (rules.dataverseHostSuffixes ?? []).map((s) => s.trim().toLowerCase().replace(/^\.+/, '')).filter((s) => s.length > 0);
  }

  /**
   * The policy of a cloud profile: each API's `baseUrl`, `authorityHost` for identity, Dataverse by
   * `dataverseHostSuffixes` and `dataverseUrlPrefixes`.
   */
  static fromProfile(profile: CloudProfile): LinkPolicy {
    return new LinkPolicy({
      profileName: profile.name,
      bases: {
        identity: [profile.authorityHost],
        graph: [profile.graph.baseUrl],
        bap: [profile.bap.baseUrl],
        powerApps: [profile.powerApps.baseUrl],
        flow: [profile.flow.baseUrl],
        powerPlatform: profile.powerPlatform ? [profile.powerPlatform.baseUrl] : [],
        managementActivity: [profile.managementActivity.baseUrl],
        powerBi: [profile.powerBi.baseUrl],
        arm: [profile.arm.baseUrl],
        dataverse: profile.dataverseUrlPrefixes,
      },
      dataverseHostSuffixes: profile.dataverseHostSuffixes,
    });
  }

  /** True when a request of `api` may go to `url` (and a link of `api` to `url` may be stored). Never throws. */
  allows(api: ApiName, url: string): boolean {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    if (u.username !== '' || u.password !== '') return false;
    if ((this.#bases.get(api) ?? []).some((b) => under(u, b))) return true;
    if (api === 'dataverse' && u.protocol === 'https:' && u.port === '') {
      const host = u.hostname.toLowerCase();
      return this.#suffixes.some((s) => host.endsWith(`.${s}`));
    }
    return false;
  }

  /**
   * Checks a link of `api` before it is followed or stored.
   * @param what the link's name for the message and `field` (`@odata.nextLink`, `NextPageUri`, `instanceUrl`, …).
   * @returns `url` unchanged when allowed.
   * @throws VigilError `upstream` / {@link FOREIGN_LINK} naming the API and the foreign origin.
   */
  check(api: ApiName, url: string, what = 'link'): string {
    if (!this.allows(api, url)) throw foreignLinkError(api, url, what, this.profileName);
    return url;
  }
}

/** True when `e` is a refusal of the link policy. */
export function isForeignLink(e: unknown): e is VigilError {
  return e instanceof VigilError && e.code === FOREIGN_LINK;
}
