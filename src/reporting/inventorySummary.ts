import type { InventoryKind } from '../sources/index.ts';
import type { ConnectionAttrs } from '../sources/powerPlatform/streams/connections.ts';
import type { ConnectorAttrs } from '../sources/powerPlatform/streams/connectors.ts';
import type { FlowAttrs } from '../sources/powerPlatform/streams/flows.ts';
import type { PowerAppAttrs } from '../sources/powerPlatform/streams/powerApps.ts';
import type { PowerBiWorkspaceAttrs } from '../sources/powerBi/streams/powerBiWorkspaces.ts';
import type { FoundryProjectAttrs } from '../sources/arm/streams/foundryProjects.ts';
import type { AgentsTable, DirectoryUsersTable, EnvironmentsTable } from '../store/schema.ts';

/**
 * The few facts of an inventory object that the inventory list shows beside its name, per kind, chosen from the
 * fields its stream stores (the attributes types of `sources/**`, or the core table's columns camelCased): what a
 * person scanning the list asks first (who can reach it, is it on, who owns it), never an id. A fact whose field the
 * source did not send (null) is left out, never guessed. The full object stays in `attributes`.
 */

/** One labelled fact, its value as a person reads it. */
export interface InventoryFact {
  label: string;
  value: string;
}

/** A core table's row as the inventory lists it: its columns in camelCase (`queries.ts` `pageInventory`). */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type Listed<T> = { [K in keyof T as Camel<K & string>]?: T[K] };

/**
 * Dataverse `bot.authenticationmode` and `bot.accesscontrolpolicy` choices. Source: Microsoft Learn, "bot table/entity
 * reference" (power-apps/developer/data-platform/reference/entities/bot): authenticationmode 0 Unspecified, 1 None,
 * 2 Integrated, 3 Custom Azure Active Directory, 4 Generic OAuth2; accesscontrolpolicy 0 Any, 1 Copilot readers,
 * 2 Group membership, 3 Any (multitenant); statecode 0 Active, 1 Inactive.
 */
const AGENT_AUTHENTICATION: Record<number, string> = {
  0: 'Unspecified',
  1: 'None',
  2: 'Microsoft (integrated)',
  3: 'Manual (Microsoft Entra ID)',
  4: 'Manual (generic OAuth 2)',
};
const AGENT_ACCESS: Record<number, string> = {
  0: 'Anyone who can reach a channel',
  1: 'Agent readers',
  2: 'Security group members',
  3: 'Any Microsoft Entra tenant',
};
const AGENT_STATE: Record<number, string> = { 0: 'Active', 1: 'Inactive' };

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
const yesNo = (v: unknown): string | null => (v === true || v === 1 ? 'Yes' : v === false || v === 0 ? 'No' : null);
const day = (v: unknown): string | null => (typeof v === 'string' && v.length >= 10 ? v.slice(0, 10) : null);
const coded = (v: unknown, labels: Record<number, string>): string | null => (typeof v === 'number' ? (labels[v] ?? String(v)) : text(v));
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The facts whose value is known, in order. */
function facts(entries: [string, string | null | undefined][]): InventoryFact[] {
  return entries.filter((e): e is [string, string] => typeof e[1] === 'string').map(([label, value]) => ({ label, value }));
}

/** Who an app or connection is shared with: everyone, so many people and groups, or only its owner. */
function sharing(tenant: boolean | null | undefined, users: number | null | undefined, groups?: number | null): string | null {
  if (tenant) return 'Everyone in the organization';
  if (users === null || users === undefined) return null;
  return users === 0 && !groups ? 'Nobody' : [plural(users, 'person', 'people'), ...(groups ? [plural(groups, 'group')] : [])].join(', ');
}

/**
 * The summary facts of one object of `kind` from its `attributes`; `managed` (environments only) is whether the
 * environment is a Managed Environment, read from its stored BAP object (null when it carried no governance).
 */
export function inventorySummary(kind: InventoryKind, attributes: Record<string, unknown>, managed: boolean | null = null): InventoryFact[] {
  switch (kind) {
    case 'agents': {
      const a = attributes as Listed<AgentsTable>;
      return facts([
        ['Authentication', coded(a.authenticationMode, AGENT_AUTHENTICATION)],
        ['Who can chat', coded(a.accessControlPolicy, AGENT_ACCESS)],
        ['Published', a.publishedOn ? day(a.publishedOn) : 'Not published'],
        ['State', coded(a.stateCode, AGENT_STATE)],
      ]);
    }
    case 'apps': {
      const a = attributes as Partial<PowerAppAttrs>;
      return facts([
        ['Type', text(a.appType)],
        ['Owner', text(a.owner?.displayName) ?? text(a.owner?.userPrincipalName)],
        ['Shared with', sharing(a.sharedWithTenant, a.sharedUsersCount, a.sharedGroupsCount)],
        ['Published', day(a.lastPublishTime)],
      ]);
    }
    case 'flows': {
      const a = attributes as Partial<FlowAttrs>;
      const trigger = a.triggers?.[0];
      return facts([
        ['State', text(a.state)],
        ['Trigger', trigger ? (trigger.kind ? `${trigger.type} (${trigger.kind})` : trigger.type) : null],
        ['HTTP calls', a.hasHttpAction === undefined ? null : a.hasHttpAction ? 'Yes' : 'No'],
        ['Modified', day(a.lastModifiedTime)],
      ]);
    }
    case 'connectors': {
      const a = attributes as Partial<ConnectorAttrs>;
      return facts([
        ['Custom', yesNo(a.isCustom)],
        ['Tier', text(a.tier)],
        ['Publisher', text(a.publisher)],
        ['Backend', text(a.backendHost)],
      ]);
    }
    case 'connections': {
      const a = attributes as Partial<ConnectionAttrs>;
      return facts([
        ['Connector', text(a.connectorId)],
        ['Status', a.statuses?.length ? a.statuses.join(', ') : null],
        ['Authentication', text(a.authenticationType)],
        [
          'Shared with',
          a.sharedWithTenant
            ? 'Everyone in the organization'
            : a.isShared === undefined
              ? null
              : a.isShared
                ? plural(a.sharedWith?.length ?? 0, 'principal')
                : 'Its owner only',
        ],
      ]);
    }
    case 'environments': {
      const a = attributes as Listed<EnvironmentsTable>;
      return facts([
        ['Type', text(a.sku)],
        ['Region', text(a.region)],
        ['Managed', yesNo(managed)],
        ['Dataverse', a.dataverseUrl === undefined ? null : a.dataverseUrl ? 'Yes' : 'No'],
        ['State', text(a.state)],
      ]);
    }
    case 'users': {
      const a = attributes as Listed<DirectoryUsersTable>;
      return facts([
        ['Sign-in name', text(a.userPrincipalName)],
        ['Type', text(a.userType)],
        ['Enabled', yesNo(a.accountEnabled)],
      ]);
    }
    case 'groups': {
      const a = attributes as { mail?: string | null; securityEnabled?: number | null; groupTypes?: string | null };
      let types: unknown = null;
      try {
        types = a.groupTypes ? JSON.parse(a.groupTypes) : null;
      } catch {
        types = null;
      }
      const unified = Array.isArray(types) && types.includes('Unified');
      return facts([
        ['Type', Array.isArray(types) ? (unified ? 'Microsoft 365' : a.securityEnabled ? 'Security' : 'Distribution') : null],
        ['Mail', text(a.mail)],
        ['Security', yesNo(a.securityEnabled)],
      ]);
    }
    case 'powerbi-workspaces': {
      const a = attributes as Partial<PowerBiWorkspaceAttrs>;
      return facts([
        ['Type', text(a.type)],
        ['State', text(a.state)],
        ['Members', typeof a.userCount === 'number' ? `${a.userCount}${a.externalUserCount ? ` (${a.externalUserCount} external)` : ''}` : null],
        ['Reports', Array.isArray(a.reports) ? String(a.reports.length) : null],
      ]);
    }
    case 'foundry-projects': {
      const a = attributes as Partial<FoundryProjectAttrs>;
      return facts([
        ['Location', text(a.location)],
        ['State', text(a.provisioningState)],
        ['Default', yesNo(a.isDefault)],
      ]);
    }
    default:
      return [];
  }
}
