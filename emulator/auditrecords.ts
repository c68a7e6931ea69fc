/**
 * Audit records of the emulated Office 365 Management Activity feed: the record kinds, their realistic shapes, and the
 * per-tenant catalogue (users and their IPs, sites, apps, flows, agents, workspaces, labels…) they are drawn from.
 *
 * Every generated record is a pure function of (feed seed, stream, index): nothing is stored per record, so a feed of
 * millions of records costs no memory. Shapes follow the Management Activity schema (common schema + service schemas)
 * and the product docs cited per kind; fields the emulator invents are marked EMULATOR in comments and in the README.
 *
 * Sources: MicrosoftDocs/office-365-management-api `office-365-management-activity-api-schema.md` (common, SharePoint,
 * Exchange mailbox, Azure AD, DLP, Power BI schemas), `copilot-schema.md` (CopilotInteraction), reference §6;
 * MicrosoftDocs/power-platform `admin/activity-logging-auditing/activity-logs-power-apps.md` (PropertyCollection),
 * `admin/audit/activity-logs-power-automate.md` (Flow fields), `admin/dlp-activity-logging.md` (AdditionalInfo).
 */
import { SYSTEM_ADMINISTRATOR } from './constants.ts';
import { createRng, seedToUint32, type Rng } from './prng.ts';
import type { Tenant } from './tenant.ts';

/** The content types of the Management Activity API (reference §6). */
export const CONTENT_TYPES = ['Audit.AzureActiveDirectory', 'Audit.Exchange', 'Audit.SharePoint', 'Audit.General', 'DLP.All'] as const;

/** One Management Activity content type. */
export type ContentType = (typeof CONTENT_TYPES)[number];

/** Whether a string is one of `CONTENT_TYPES` (exact, case-sensitive as the API compares). */
export function isContentType(value: string): value is ContentType {
  return (CONTENT_TYPES as readonly string[]).includes(value);
}

/**
 * The kinds of generated record; each is one stream of the feed:
 * `copilot` (261), `powerApps` (256, resource type PowerApp), `flow` (30), `powerPlatformAdmin` (256), `powerPlatformDlp` (187), `powerBi` (20)
 * in Audit.General; `entra` (8) in Audit.AzureActiveDirectory; `exchange` (50/2) in Audit.Exchange; `sharePoint` (6) in
 * Audit.SharePoint; `dlp` (11/13) in DLP.All.
 */
export type RecordKind = 'copilot' | 'powerApps' | 'flow' | 'powerPlatformAdmin' | 'powerPlatformDlp' | 'powerBi' | 'entra' | 'exchange' | 'sharePoint' | 'dlp';

/** A variant of a record kind: its operation, RecordType, relative weight and (for notable cases) a scenario name. */
export interface RecordVariant {
  operation: string;
  recordType: number;
  weight: number;
  /** Named case counted by the ground truth (`scenarios`), e.g. `agent.authNone`. */
  scenario?: string;
  /**
   * The variant needs tenant data: guests, Copilot Studio agents, or agents whose authentication is None. Without it
   * the variant's weight moves to the `fallback` variant.
   */
  requires?: 'guests' | 'bots' | 'authNoneBots' | ComponentRequirement;
  /** Index of the variant that takes this one's weight when `requires` is not met (default 0). */
  fallback?: number;
  /**
   * Bursts (issue 20): records of the stream whose index k has `offset ≤ k mod period < offset + size` are this
   * variant whatever the weights (give it weight 0), so `size` consecutive records — one burst, numbered
   * ⌊k / period⌋ — come in a short span, rendered by one user ({@link RecordCore.burst}). Burst variants sharing a
   * `group` (same period) make one burst together, e.g. a plugin enabled then disabled: the ground truth counts the
   * group's bursts under the group's name.
   */
  burst?: { period: number; offset: number; size: number; group?: string };
}

/** A record kind: its content type, default weight within it, and its variants. */
export interface KindSpec {
  kind: RecordKind;
  contentType: ContentType;
  /** Default share within the content type (weights are normalised). */
  weight: number;
  variants: readonly RecordVariant[];
}

/** The streams of the feed, in a fixed order (the stream index is part of every record's identity). */
export const RECORD_KINDS: readonly KindSpec[] = [
  {
    kind: 'copilot',
    contentType: 'Audit.General',
    weight: 45,
    variants: [
      { operation: 'CopilotInteraction', recordType: 261, weight: 40, scenario: 'copilot.bizchat' },
      { operation: 'CopilotInteraction', recordType: 261, weight: 28, scenario: 'copilot.appchat' },
      { operation: 'CopilotInteraction', recordType: 261, weight: 14, scenario: 'copilot.agent', requires: 'bots' },
      { operation: 'CopilotInteraction', recordType: 261, weight: 5, scenario: 'copilot.guestLabelled', requires: 'guests', fallback: 4 },
      { operation: 'CopilotInteraction', recordType: 261, weight: 13, scenario: 'copilot.memberLabelled' },
      // --- issue 20 (Sentinel Microsoft Copilot peers): flagged interactions, Copilot plugin/settings records, bursts ---
      { operation: 'CopilotInteraction', recordType: 261, weight: 1, scenario: 'copilot.jailbreak' },
      { operation: 'CopilotInteraction', recordType: 261, weight: 1, scenario: 'copilot.xpia' },
      { operation: 'CopilotInteraction', recordType: 261, weight: 2, scenario: 'copilot.flagsClear' },
      { operation: 'CreatePlugin', recordType: 310, weight: 0.5, scenario: 'copilotPlugin.createdByUser' },
      { operation: 'CreatePlugin', recordType: 310, weight: 0.5, scenario: 'copilotPlugin.createdByAdmin' },
      { operation: 'EnablePlugin', recordType: 313, weight: 0.5, scenario: 'copilotPlugin.reenabled' },
      { operation: 'UpdateTenantSettings', recordType: 325, weight: 0.5, scenario: 'copilotSettings.fileUploadsDisabled' },
      { operation: 'UpdateTenantSettings', recordType: 325, weight: 0.5, scenario: 'copilotSettings.fileUploadsEnabled' },
      {
        operation: 'EnablePlugin',
        recordType: 313,
        weight: 0,
        scenario: 'copilotPlugin.toggledOn',
        burst: { period: 500, offset: 0, size: 1, group: 'copilotPlugin.toggle' },
      },
      {
        operation: 'DisableCopilotPlugin',
        recordType: 314,
        weight: 0,
        scenario: 'copilotPlugin.toggledOff',
        burst: { period: 500, offset: 1, size: 1, group: 'copilotPlugin.toggle' },
      },
      { operation: 'CopilotInteraction', recordType: 261, weight: 0, scenario: 'copilot.volumeSpike', burst: { period: 3000, offset: 100, size: 120 } },
      // --- end issue 20 ---
    ],
  },
  {
    kind: 'powerApps',
    contentType: 'Audit.General',
    weight: 15,
    variants: [
      { operation: 'LaunchPowerApp', recordType: 256, weight: 72 },
      { operation: 'CreatePowerApp', recordType: 256, weight: 8 },
      { operation: 'PublishPowerApp', recordType: 256, weight: 10 },
      { operation: 'EditPowerAppRolePermission', recordType: 256, weight: 7 },
      { operation: 'DeletePowerApp', recordType: 256, weight: 3 },
      // --- issue 20 (Sentinel Microsoft Business Applications peers): bulk deletion, connections ---
      { operation: 'DeletePowerApp', recordType: 256, weight: 0, scenario: 'powerApps.bulkDelete', burst: { period: 400, offset: 0, size: 5 } },
      { operation: 'PutConnection', recordType: 256, weight: 2, scenario: 'connection.production' },
      { operation: 'PutConnection', recordType: 256, weight: 2, scenario: 'connection.nonProduction' },
      {
        operation: 'PowerAppPermissionEdited',
        recordType: 256,
        weight: 0,
        scenario: 'powerApps.sharedToNewGuests',
        burst: { period: 400, offset: 200, size: 3 },
      },
      { operation: 'PowerAppPermissionEdited', recordType: 256, weight: 3, scenario: 'powerApps.sharedToMember' },
      // --- end issue 20 ---
    ],
  },
  {
    kind: 'flow',
    contentType: 'Audit.General',
    weight: 12,
    variants: [
      { operation: 'CreateFlow', recordType: 30, weight: 22 },
      { operation: 'EditFlow', recordType: 30, weight: 42 },
      { operation: 'PutPermissions', recordType: 30, weight: 14 },
      { operation: 'DeleteFlow', recordType: 30, weight: 9 },
      { operation: 'EditFlow', recordType: 30, weight: 6, scenario: 'flow.externalHttp' },
      { operation: 'CreateFlow', recordType: 30, weight: 3, scenario: 'flow.externalHttp' },
      { operation: 'EditFlow', recordType: 30, weight: 4, scenario: 'flow.microsoftHttp' },
      // --- issue 20: a burst of deletions by one maker ---
      { operation: 'DeleteFlow', recordType: 30, weight: 0, scenario: 'flow.bulkDelete', burst: { period: 400, offset: 0, size: 5 } },
      // --- end issue 20 ---
    ],
  },
  {
    kind: 'powerPlatformAdmin',
    contentType: 'Audit.General',
    weight: 5,
    variants: [
      { operation: 'BotCreate', recordType: 256, weight: 22, scenario: 'agent.created' },
      { operation: 'BotUpdateOperation-BotPublish', recordType: 256, weight: 26, scenario: 'agent.published' },
      { operation: 'BotUpdateOperation-BotPublish', recordType: 256, weight: 4, scenario: 'agent.publishedAuthNone', requires: 'authNoneBots', fallback: 1 },
      { operation: 'BotUpdateOperation-BotAuthUpdate', recordType: 256, weight: 6, scenario: 'agent.authNone' },
      { operation: 'BotUpdateOperation-BotAuthUpdate', recordType: 256, weight: 6, scenario: 'agent.authChangedNotNone' },
      { operation: 'BotUpdateOperation-BotShare', recordType: 256, weight: 16 },
      { operation: 'BotUpdateOperation-BotNameUpdate', recordType: 256, weight: 10 },
      { operation: 'CreateCustomConnector', recordType: 256, weight: 6, scenario: 'customConnector.created' },
      { operation: 'UpdateCustomConnector', recordType: 256, weight: 4, scenario: 'customConnector.updated' },
      // ── Agent lifecycle (det2): Copilot Studio authoring events, positives and near-misses. Source: Microsoft Learn
      // "Audit Copilot Studio activities in Microsoft Purview" (agent authoring events).
      { operation: 'BotDelete', recordType: 256, weight: 3, scenario: 'agent.deleted' },
      { operation: 'BotDeleteCleanup', recordType: 256, weight: 3, scenario: 'agent.deleteCleanup' },
      { operation: 'BotUpdateOperation-BotAuthUpdate', recordType: 256, weight: 4, scenario: 'agent.authWeakened' },
      { operation: 'BotUpdateOperation-BotShare', recordType: 256, weight: 3, scenario: 'agent.sharedWithEveryone' },
      { operation: 'BotUpdateOperation-BotShare', recordType: 256, weight: 3, scenario: 'agent.sharedWithGroup' },
      { operation: 'BotAppInsightsUpdate', recordType: 256, weight: 2, scenario: 'agent.appInsightsChanged' },
      // Component records are about the tenant's own components (`COMPONENT_SCENARIOS`): knowledge other than public
      // websites, topics, instructions; public website knowledge, connector tools and MCP servers where the tenant's
      // agents have them (else a topic).
      { operation: 'BotComponentCreate', recordType: 256, weight: 4, scenario: 'agent.knowledgeAdded' },
      { operation: 'BotComponentCreate', recordType: 256, weight: 6, scenario: 'agent.topicAdded' },
      { operation: 'BotComponentUpdate', recordType: 256, weight: 4, scenario: 'agent.instructionsChanged' },
      { operation: 'BotComponentUpdate', recordType: 256, weight: 6, scenario: 'agent.topicChanged' },
      // ── issue 20 (det3): components the join with the collected inventory classifies.
      {
        operation: 'BotComponentCreate',
        recordType: 256,
        weight: 2,
        scenario: 'agent.publicWebsiteKnowledgeAdded',
        requires: 'publicWebsiteKnowledge',
        fallback: 15,
      },
      { operation: 'BotComponentCreate', recordType: 256, weight: 2, scenario: 'agent.toolAdded', requires: 'tools', fallback: 16 },
      { operation: 'BotComponentCreate', recordType: 256, weight: 1, scenario: 'agent.mcpServerAdded', requires: 'mcpTools', fallback: 16 },
      // A maker saving an agent's instructions three times in a row (one session of edits).
      { operation: 'BotComponentUpdate', recordType: 256, weight: 0, scenario: 'agent.instructionsChanged', burst: { period: 300, offset: 150, size: 3 } },
      // ── end agent lifecycle (det2)
    ],
  },
  {
    kind: 'powerPlatformDlp',
    contentType: 'Audit.General',
    weight: 3,
    variants: [
      { operation: 'CreateDlpPolicy', recordType: 187, weight: 30, scenario: 'dlp.policyCreated' },
      { operation: 'UpdateDlpPolicy', recordType: 187, weight: 25, scenario: 'dlp.policyWeakened' },
      { operation: 'UpdateDlpPolicy', recordType: 187, weight: 25, scenario: 'dlp.policyRenamed' },
      { operation: 'DeleteDlpPolicy', recordType: 187, weight: 20, scenario: 'dlp.policyDeleted' },
    ],
  },
  {
    kind: 'powerBi',
    contentType: 'Audit.General',
    weight: 20,
    variants: [
      { operation: 'ViewReport', recordType: 20, weight: 55 },
      { operation: 'ViewDashboard', recordType: 20, weight: 14 },
      { operation: 'ExportReport', recordType: 20, weight: 10, scenario: 'powerbi.export' },
      { operation: 'ShareReport', recordType: 20, weight: 8, scenario: 'powerbi.share' },
      { operation: 'AnalyzeInExcel', recordType: 20, weight: 6 },
      { operation: 'CreateReport', recordType: 20, weight: 5 },
      { operation: 'PublishToWebReport', recordType: 20, weight: 2, scenario: 'powerbi.publishToWeb' },
    ],
  },
  {
    kind: 'entra',
    contentType: 'Audit.AzureActiveDirectory',
    weight: 1,
    variants: [
      { operation: 'Update user.', recordType: 8, weight: 34 },
      { operation: 'Add member to group.', recordType: 8, weight: 30 },
      { operation: 'Update group.', recordType: 8, weight: 10 },
      { operation: 'Consent to application.', recordType: 8, weight: 5, scenario: 'entra.adminConsent' },
      { operation: 'Consent to application.', recordType: 8, weight: 6, scenario: 'entra.userConsent' },
      { operation: 'Add service principal credentials.', recordType: 8, weight: 8, scenario: 'entra.spCredentials' },
      { operation: 'Add app role assignment to service principal.', recordType: 8, weight: 7, scenario: 'entra.appRoleAssignment' },
      // --- issue 20: role assignments and departures ---
      { operation: 'Add member to role.', recordType: 8, weight: 3, scenario: 'entra.powerPlatformAdminRole' },
      { operation: 'Add member to role.', recordType: 8, weight: 3, scenario: 'entra.otherRole' },
      { operation: 'Disable account.', recordType: 8, weight: 2, scenario: 'entra.memberDisabled' },
      { operation: 'Disable account.', recordType: 8, weight: 2, scenario: 'entra.guestDisabled', requires: 'guests', fallback: 0 },
      { operation: 'Invite external user.', recordType: 8, weight: 3, scenario: 'entra.guestInvited', requires: 'guests', fallback: 0 },
      // --- end issue 20 ---
    ],
  },
  {
    kind: 'exchange',
    contentType: 'Audit.Exchange',
    weight: 1,
    variants: [
      { operation: 'MailItemsAccessed', recordType: 50, weight: 72 },
      { operation: 'Send', recordType: 2, weight: 28 },
    ],
  },
  {
    kind: 'sharePoint',
    contentType: 'Audit.SharePoint',
    weight: 1,
    variants: [
      { operation: 'FileAccessed', recordType: 6, weight: 58 },
      { operation: 'FileModified', recordType: 6, weight: 20 },
      { operation: 'FileDownloaded', recordType: 6, weight: 14 },
      { operation: 'FilePreviewed', recordType: 6, weight: 8 },
    ],
  },
  {
    kind: 'dlp',
    contentType: 'DLP.All',
    weight: 1,
    variants: [
      { operation: 'DlpRuleMatch', recordType: 11, weight: 60, scenario: 'dlp.sharePointMatch' },
      { operation: 'DlpRuleMatch', recordType: 13, weight: 40, scenario: 'dlp.exchangeMatch' },
    ],
  },
];

// --- hashing ---------------------------------------------------------------------------------------------------------

function fmix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * A 32-bit hash of (seed, stream, index, salt): the source of every per-record decision. `index` may be any
 * non-negative integer below 2^53.
 */
export function recordHash(seed: number, stream: number, index: number, salt: number): number {
  const lo = index >>> 0;
  const hi = Math.floor(index / 4294967296) >>> 0;
  let h = fmix((seed ^ Math.imul(salt + 0x6b, 0x9e3779b9)) >>> 0);
  h = fmix((h ^ lo) >>> 0);
  h = fmix((h ^ Math.imul(hi + 0x27d4eb2d, 0x165667b1) ^ Math.imul(stream + 1, 0x2545f491)) >>> 0);
  return h;
}

/** `recordHash` as a float in [0, 1). */
export function recordUnit(seed: number, stream: number, index: number, salt: number): number {
  return recordHash(seed, stream, index, salt) / 4294967296;
}

const HEX = '0123456789abcdef';
const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex8(n: number): string {
  return (HEX2[n >>> 24] as string) + HEX2[(n >>> 16) & 255] + HEX2[(n >>> 8) & 255] + HEX2[n & 255];
}

/** A version-4-shaped GUID from four 32-bit words (no intermediate slicing). */
function guidOf(a: number, b: number, c: number, d: number): string {
  return (
    `${hex8(a)}-${HEX2[b >>> 24]}${HEX2[(b >>> 16) & 255]}-4${HEX[(b >>> 8) & 15]}${HEX2[b & 255]}-` +
    `${HEX[8 + (c >>> 30)]}${HEX[(c >>> 24) & 15]}${HEX2[(c >>> 16) & 255]}-${HEX2[(c >>> 8) & 255]}${HEX2[c & 255]}${hex8(d)}`
  );
}

/** The record Id (a version-4-shaped GUID) of (seed, stream, index). */
export function recordGuid(seed: number, stream: number, index: number): string {
  return guidOf(
    recordHash(seed, stream, index, 100),
    recordHash(seed, stream, index, 101),
    recordHash(seed, stream, index, 102),
    recordHash(seed, stream, index, 103),
  );
}

/** A fast seeded source for one record (mulberry32). */
export class Draw {
  #s: number;

  /** @param seed 32-bit seed. */
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }

  /** Float in [0, 1). */
  next(): number {
    this.#s = (this.#s + 0x6d2b79f5) >>> 0;
    let t = this.#s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A GUID from this source. */
  guid(): string {
    return guidOf((this.next() * 4294967296) >>> 0, (this.next() * 4294967296) >>> 0, (this.next() * 4294967296) >>> 0, (this.next() * 4294967296) >>> 0);
  }

  /** `length` characters from `alphabet`. */
  chars(length: number, alphabet: string): string {
    const codes = new Array<number>(length);
    const n = alphabet.length;
    for (let i = 0; i < length; i++) codes[i] = alphabet.charCodeAt(Math.floor(this.next() * n));
    return String.fromCharCode(...codes);
  }
}

// --- catalogue -------------------------------------------------------------------------------------------------------

/** A user as the feed sees it: identity, PUID-style keys and a small set of usual client IPs. */
export interface FeedUser {
  id: string;
  upn: string;
  displayName: string;
  guest: boolean;
  admin: boolean;
  /** 16 upper-case hex digits, the user's PUID (`UserKey` of Exchange/SharePoint/Power BI records). */
  puid: string;
  /** The user's usual client IPs (1–3); a small share of records uses a new one. */
  ips: string[];
  /** `id`, `upn` and `displayName` as JSON string literals (records are written as text). */
  idJson: string;
  upnJson: string;
  nameJson: string;
  /** Exchange identity of the user's mailbox: owner SID, mailbox GUID and the mailbox server. */
  sid: string;
  mailboxGuid: string;
  mailboxServer: string;
}

/** Tenant-derived material the records are drawn from (a snapshot taken when the feed is configured). */
export interface AuditCatalog {
  tenantId: string;
  /** `tenantId` as a JSON string literal. */
  tenantIdJson: string;
  domain: string;
  /** `domain` as a JSON string literal. */
  domainJson: string;
  /** `https://{slug}.sharepoint.com`. */
  spHost: string;
  /** `https://{slug}-my.sharepoint.com`. */
  myHost: string;
  users: FeedUser[];
  members: FeedUser[];
  guests: FeedUser[];
  admins: FeedUser[];
  sites: { url: string; name: string; id: string; webId: string }[];
  labels: { id: string; name: string }[];
  /** `sku`: BAP `environmentSku` (issue 20: connections in production environments). */
  environments: { id: string; name: string; sku: string }[];
  powerApps: { id: string; name: string; env: string }[];
  flows: { id: string; name: string; env: string }[];
  bots: { id: string; name: string; env: string; envName: string; authNone: boolean }[];
  /** The agents' components the feed's component records are about (see {@link FeedComponent}). */
  components: FeedComponent[];
  customConnectors: { id: string; name: string; host: string; env: string }[];
  workspaces: { id: string; name: string; reports: { id: string; name: string; datasetId: string }[]; dashboards: { id: string; name: string }[] }[];
  capacity: { id: string; name: string };
  dlpPolicies: { id: string; name: string; type: string }[];
  /** Applications other than Microsoft's that consents, credentials and role assignments are about. */
  apps: { appId: string; spId: string; name: string }[];
  /** Object id of the Microsoft Graph service principal in the tenant. */
  graphSpId: string;
  dlpRules: { policyId: string; policyName: string; ruleId: string; ruleName: string; sitId: string; sitName: string }[];
  groups: { id: string; name: string }[];
  /** True when every catalogue string is ASCII, so every generated record is ASCII (JSON text = Latin-1 bytes). */
  ascii: boolean;
}

const FILES = [
  'Q3 Forecast.xlsx',
  'Board Minutes.docx',
  'Salary Review 2025.xlsx',
  'Customer List.xlsx',
  'Product Roadmap.pptx',
  'Contract - Northwind.docx',
  'Incident Report.docx',
  'Budget FY26.xlsx',
  'Onboarding Guide.docx',
  'Architecture Overview.pptx',
  'Price List.xlsx',
  'Acquisition Targets.xlsx',
  'Benefits Overview.pdf',
  'Sales Deck.pptx',
  'Security Review.docx',
  'Supplier Scorecard.xlsx',
  'Team Offsite.docx',
  'Release Notes.docx',
];
const APP_NAMES = [
  'Expense Tracker',
  'Site Inspection',
  'Leave Request',
  'Asset Checkout',
  'Visitor Sign-In',
  'Field Service Notes',
  'Help Desk',
  'Purchase Approvals',
  'Training Tracker',
  'Inventory Counter',
  'Budget Planner',
  'Event Registration',
];
const FLOW_NAMES = [
  'Notify manager on new request',
  'Copy attachments to SharePoint',
  'Daily sales digest',
  'Sync leads to CRM',
  'Approval for purchase orders',
  'Post new items to Teams',
  'Archive old files',
  'Send survey reminders',
  'Escalate overdue tickets',
  'Backup form responses',
];
const CONNECTOR_NAMES = [
  'Office 365 Outlook',
  'SharePoint',
  'Microsoft Teams',
  'Approvals',
  'OneDrive for Business',
  'Excel Online (Business)',
  'Microsoft Dataverse',
  'Office 365 Users',
  'Microsoft Forms',
  'Planner',
];
const WORKSPACES = [
  'Finance',
  'Sales Analytics',
  'HR Insights',
  'Operations',
  'Executive Dashboards',
  'Marketing',
  'Supply Chain',
  'Customer Success',
  'IT Service Desk',
  'Product Analytics',
];
const REPORTS = [
  'Revenue Overview',
  'Pipeline',
  'Headcount',
  'Attrition',
  'Inventory Health',
  'Campaign Performance',
  'Margin by Region',
  'Ticket Volume',
  'Customer Churn',
  'Budget vs Actuals',
  'Supplier Spend',
  'Weekly KPIs',
];
const THIRD_PARTY_APPS = [
  'Mail Merge Pro',
  'PDF Converter Online',
  'Calendar Sync Tool',
  'DocuSign',
  'Zoom',
  'Sales Insights Bot',
  'Contract Analyzer AI',
  'Meeting Notes Assistant',
];
const CUSTOM_CONNECTORS: { name: string; host: string }[] = [
  { name: 'Partner Orders API', host: 'api.partner-orders.example' },
  { name: 'Shipping Tracker', host: 'tracking.fastship.example' },
  { name: 'Legacy ERP Bridge', host: 'erp-gateway.contoso-legacy.example' },
  { name: 'Data Export Hook', host: 'collector.data-export.example' },
];
const SITES = ['Finance', 'HR', 'Legal', 'Sales', 'Marketing', 'Engineering', 'Executive', 'Operations', 'ProjectPhoenix', 'Procurement'];
const IP_PREFIXES = ['20.', '40.', '52.', '86.', '94.', '109.', '145.', '176.', '185.', '203.', '81.', '92.'];
const GUEST_IP_PREFIXES = ['73.', '98.', '174.', '24.', '67.', '188.'];
const SENSITIVE_TYPES: { id: string; name: string }[] = [
  { id: '50842eb7-edc8-4019-85dd-5a5c1f2bb085', name: 'Credit Card Number' },
  { id: 'a44669fe-0d48-453d-a9b1-2cc83f2cba77', name: 'U.S. Social Security Number (SSN)' },
  { id: 'e7dc4711-11b7-4cb0-b88b-2c394a771f0e', name: 'International Banking Account Number (IBAN)' },
];

/** Well-known Microsoft Graph application permissions (id, value, display name) used by role-assignment records. */
const GRAPH_APP_ROLES: { id: string; value: string; name: string }[] = [
  { id: '810c84a8-4a9e-49e6-bf7d-12d183f40d01', value: 'Mail.Read', name: 'Read mail in all mailboxes' },
  { id: '01d4889c-1287-42c6-ac1f-5d1e02578ef6', value: 'Files.Read.All', name: 'Read files in all site collections' },
  { id: 'df021288-bdef-4463-88db-98f22de89214', value: 'User.Read.All', name: "Read all users' full profiles" },
  { id: '7ab1d382-f21e-4acd-a863-ba3e13f7da61', value: 'Directory.Read.All', name: 'Read directory data' },
  { id: '332a536c-c7ef-4017-ab91-336970924f0d', value: 'Sites.Read.All', name: 'Read items in all site collections' },
];
const GRAPH_APP_ID = '00000003-0000-0000-c000-000000000000';
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36 Edg/128.0.0.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:129.0) Gecko/20100101 Firefox/129.0',
];
const MODELS: { ModelProviderName: string; ModelName: string }[] = [
  { ModelProviderName: 'OpenAI', ModelName: 'gpt-4o' },
  { ModelProviderName: 'OpenAI', ModelName: 'gpt-4.1' },
  { ModelProviderName: 'Microsoft', ModelName: 'DEEP_LEO' },
];
const BASE62 = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function ipFrom(rng: Rng, prefixes: readonly string[]): string {
  return `${rng.pick(prefixes)}${rng.int(1, 254)}.${rng.int(0, 255)}.${rng.int(1, 254)}`;
}

const MAILBOX_SERVERS = ['AM6PR03MB', 'DM6PR11MB', 'SN7PR04MB', 'PH0PR12MB', 'BY5PR17MB', 'VI1PR08MB'];

function feedUser(rng: Rng, id: string, upn: string, displayName: string, guest: boolean, admin: boolean, ips: string[]): FeedUser {
  const puid = `1003${rng.chars(12, '0123456789ABCDEF')}`;
  const sid = `S-1-5-21-${rng.int(1000000000, 4200000000)}-${rng.int(1000000000, 4200000000)}-${rng.int(100000000, 4200000000)}-${rng.int(10000000, 99999999)}`;
  const mailboxServer = `${rng.pick(MAILBOX_SERVERS)}${rng.int(1000, 9999)}`;
  return {
    id,
    upn,
    displayName,
    guest,
    admin,
    puid,
    ips,
    idJson: JSON.stringify(id),
    upnJson: JSON.stringify(upn),
    nameJson: JSON.stringify(displayName),
    sid,
    mailboxGuid: rng.guid(),
    mailboxServer,
  };
}

function slugOf(domain: string): string {
  return (domain.split('.')[0] ?? 'contoso').toLowerCase().replace(/[^a-z0-9]/g, '') || 'contoso';
}

/**
 * What a component record says changed, as the feed picks components for its `BotComponent*` records: topics,
 * instructions, knowledge sources (public websites apart), connector tools and MCP tools. Child and connected agents
 * and variables are left out (no record kind is about them).
 */
type FeedComponentKind = 'topic' | 'instructions' | 'knowledge' | 'publicWebsiteKnowledge' | 'tool' | 'mcp';

/** Requirements of component variants: the tenant has an active component of that kind. */
type ComponentRequirement = 'publicWebsiteKnowledge' | 'tools' | 'mcpTools';

/**
 * One of the tenant's agent components (Dataverse `botcomponent`, `agentcomponents.ts`) a component record can be
 * about: its id, parent bot, `componenttype`, kind, and whether the tenant's connector app (`tenant.connectorAppId`) is
 * an application user with System Administrator in its environment (`readable`: a collection can see it).
 */
export interface FeedComponent {
  id: string;
  botId: string;
  type: number;
  kind: FeedComponentKind;
  readable: boolean;
}

/** The kind of a generated component from its `componenttype` and YAML text (the generator's own shapes). */
function feedComponentKind(type: number, data: string): FeedComponentKind | null {
  if (type === 15) return 'instructions';
  if (type === 16) return /\bPublicSiteSearchSource\b/.test(data) ? 'publicWebsiteKnowledge' : 'knowledge';
  if (type !== 9) return null;
  if (data.startsWith('kind: AdaptiveDialog')) return 'topic';
  if (!data.startsWith('kind: TaskDialog')) return null;
  if (/\bModelContextProtocolMetadata\b/.test(data)) return 'mcp';
  return /\bInvokeConnectorTaskAction\b/.test(data) ? 'tool' : null;
}

/** The active components of every Dataverse environment's agents, in tenant order. */
function feedComponents(tenant: Tenant): FeedComponent[] {
  const out: FeedComponent[] = [];
  const app = tenant.connectorAppId ?? null;
  for (const env of tenant.environments) {
    const org = env.dataverse;
    if (!org) continue;
    const readable = app !== null && org.appUsers.some((a) => a.appId === app && a.roles.includes(SYSTEM_ADMINISTRATOR));
    const bots = new Set(org.bots.map((b) => b.botid));
    for (const c of org.botcomponents ?? []) {
      const kind = c.statecode === 0 && c._parentbotid_value && bots.has(c._parentbotid_value) ? feedComponentKind(c.componenttype, c.data ?? '') : null;
      if (kind) out.push({ id: c.botcomponentid, botId: c._parentbotid_value as string, type: c.componenttype, kind, readable });
    }
  }
  return out;
}

/** The component kind each component scenario's records are about. */
const COMPONENT_SCENARIOS: Readonly<Record<string, FeedComponentKind>> = {
  'agent.knowledgeAdded': 'knowledge',
  'agent.publicWebsiteKnowledgeAdded': 'publicWebsiteKnowledge',
  'agent.topicAdded': 'topic',
  'agent.topicChanged': 'topic',
  'agent.instructionsChanged': 'instructions',
  'agent.toolAdded': 'tool',
  'agent.mcpServerAdded': 'mcp',
};

const REQUIRED_KIND: Record<ComponentRequirement, FeedComponentKind> = { publicWebsiteKnowledge: 'publicWebsiteKnowledge', tools: 'tool', mcpTools: 'mcp' };

/** Whether a catalogue meets a variant's `requires` (an absent requirement is met). */
export function requirementMet(c: AuditCatalog, requires: RecordVariant['requires']): boolean {
  if (requires === undefined) return true;
  if (requires === 'guests') return c.guests.length > 0;
  if (requires === 'bots') return c.bots.length > 0;
  if (requires === 'authNoneBots') return c.bots.some((b) => b.authNone);
  return c.components.some((x) => x.kind === REQUIRED_KIND[requires]);
}

const COMPONENT_POOLS = new WeakMap<AuditCatalog, Map<FeedComponentKind, FeedComponent[]>>();

/** The catalogue's components of one kind (kept per catalogue: records draw from them often). */
function componentPool(c: AuditCatalog, kind: FeedComponentKind): FeedComponent[] {
  let pools = COMPONENT_POOLS.get(c);
  if (!pools) COMPONENT_POOLS.set(c, (pools = new Map()));
  let pool = pools.get(kind);
  if (!pool) pools.set(kind, (pool = c.components.filter((x) => x.kind === kind)));
  return pool;
}

/**
 * The subject of a component record: the component (one of the tenant's of the scenario's kind, null when it has
 * none: the record then names a component id of its own) and the user who changed it. These are the record's first
 * draws (a burst's records share the burst's component and user), so the ground truth finds them without rendering
 * the record. Null for a record that is not a component one.
 */
export function componentRecordSubject(
  c: AuditCatalog,
  variant: RecordVariant,
  d: Draw,
  burst?: RecordCore['burst'],
): { component: FeedComponent | null; user: FeedUser } | null {
  const kind = variant.scenario ? COMPONENT_SCENARIOS[variant.scenario] : undefined;
  if (!kind) return null;
  const pool = componentPool(c, kind);
  if (burst) return { component: pool.length > 0 ? (pool[burst.n % pool.length] as FeedComponent) : null, user: burstUser(c.members, burst.n) };
  const component = pool.length > 0 ? d.pick(pool) : null;
  const user = d.chance(0.3) ? d.pick(c.admins) : d.pick(c.members);
  return { component, user };
}

/**
 * Builds the catalogue of a tenant for a feed seed: enabled users (members and guests) with their usual IPs, SharePoint
 * sites (Microsoft 365 groups first), sensitivity labels, environments, Power Apps, flows, Copilot Studio agents (the
 * tenant's Dataverse bots, so `authNone` agents are the ones with `authenticationmode` 1), Power BI workspaces, DLP
 * policies and third-party applications. Deterministic from (tenant, seed).
 */
export function buildCatalog(tenant: Tenant, seed: number | string): AuditCatalog {
  const rng = createRng(`${String(seed)}:audit-catalog`);
  const domain = tenant.domains[0] ?? 'contoso.onmicrosoft.com';
  const slug = slugOf(domain);
  const spHost = `https://${slug}.sharepoint.com`;
  const myHost = `https://${slug}-my.sharepoint.com`;
  const adminRoles = new Set(['62e90394-69f5-4237-9190-012177145e10', '11648597-926c-4cf3-9c36-bcebb0ba8dcc']);
  const users: FeedUser[] = tenant.users
    .filter((u) => u.accountEnabled)
    .map((u) => {
      const guest = u.userType === 'Guest';
      const ipCount = rng.int(1, 3);
      const ips: string[] = [];
      for (let i = 0; i < ipCount; i++) ips.push(ipFrom(rng, guest ? GUEST_IP_PREFIXES : IP_PREFIXES));
      return feedUser(
        rng,
        u.id,
        u.userPrincipalName,
        u.displayName,
        guest,
        (u.directoryRoles ?? []).some((r) => adminRoles.has(r)),
        ips,
      );
    });
  if (users.length === 0) users.push(feedUser(rng, rng.guid(), `admin@${domain}`, 'Administrator', false, true, [ipFrom(rng, IP_PREFIXES)]));
  const members = users.filter((u) => !u.guest);
  const guests = users.filter((u) => u.guest);
  const admins = members.filter((u) => u.admin);
  if (admins.length === 0) admins.push((members[0] ?? users[0]) as FeedUser);

  const siteNames = tenant.groups
    .filter((g) => g.groupTypes.includes('Unified'))
    .map((g) => g.mailNickname)
    .slice(0, 30);
  for (const s of SITES) if (siteNames.length < 8) siteNames.push(s);
  const sites = siteNames.map((name) => ({ url: `${spHost}/sites/${name}`, name, id: rng.guid(), webId: rng.guid() }));

  const labels = [
    { id: rng.guid(), name: 'General' },
    { id: rng.guid(), name: 'Confidential' },
    { id: rng.guid(), name: 'Highly Confidential' },
  ];
  const environments =
    tenant.environments.length > 0
      ? tenant.environments.map((e) => ({ id: e.name, name: e.displayName, sku: e.environmentSku as string }))
      : [{ id: `Default-${tenant.id}`, name: `${tenant.displayName} (default)`, sku: 'Default' }];
  const powerApps = Array.from({ length: rng.int(6, 14) }, () => ({ id: rng.guid(), name: rng.pick(APP_NAMES), env: rng.pick(environments).id }));
  const flows = Array.from({ length: rng.int(8, 18) }, () => ({ id: rng.guid(), name: rng.pick(FLOW_NAMES), env: rng.pick(environments).id }));
  const bots: AuditCatalog['bots'] = [];
  for (const env of tenant.environments) {
    for (const b of env.dataverse?.bots ?? [])
      bots.push({ id: b.botid, name: b.name, env: env.name, envName: env.displayName, authNone: b.authenticationmode === 1 });
  }
  const components = feedComponents(tenant);
  const customConnectors = CUSTOM_CONNECTORS.map((c) => ({
    id: `shared_${c.name.toLowerCase().replace(/[^a-z0-9]/g, '')}-5f${rng.chars(14, HEX)}`,
    name: c.name,
    host: c.host,
    env: rng.pick(environments).id,
  }));
  const workspaces = rng
    .shuffle(WORKSPACES)
    .slice(0, rng.int(4, 8))
    .map((name) => ({
      id: rng.guid(),
      name,
      reports: rng
        .shuffle(REPORTS)
        .slice(0, rng.int(2, 5))
        .map((r) => ({ id: rng.guid(), name: r, datasetId: rng.guid() })),
      dashboards: [{ id: rng.guid(), name: `${name} Dashboard` }],
    }));
  const dlpPolicies = [
    { id: rng.guid(), name: 'Tenant default - business data', type: 'AllEnvironments' },
    { id: rng.guid(), name: 'Block social connectors', type: 'ExceptEnvironments' },
    { id: rng.guid(), name: 'Production environments', type: 'OnlyEnvironments' },
  ];
  const apps = [
    ...tenant.servicePrincipals.slice(0, 4).map((sp) => ({ appId: sp.appId, spId: sp.id, name: sp.displayName })),
    ...THIRD_PARTY_APPS.map((name) => ({ appId: rng.guid(), spId: rng.guid(), name })),
  ];
  const dlpRules = SENSITIVE_TYPES.map((sit, i) => {
    const policy = { id: rng.guid(), name: ['Financial data', 'U.S. PII', 'EU banking data'][i] ?? 'Sensitive data' };
    return { policyId: policy.id, policyName: policy.name, ruleId: rng.guid(), ruleName: `${policy.name} - low volume`, sitId: sit.id, sitName: sit.name };
  });
  const catalog: AuditCatalog = {
    tenantId: tenant.id,
    tenantIdJson: JSON.stringify(tenant.id),
    domain,
    domainJson: JSON.stringify(domain),
    spHost,
    myHost,
    users,
    members: members.length > 0 ? members : users,
    guests,
    admins,
    sites,
    labels,
    environments,
    powerApps,
    flows,
    bots,
    components,
    customConnectors,
    workspaces,
    capacity: { id: rng.guid().toUpperCase(), name: `${tenant.displayName} P1` },
    dlpPolicies,
    apps,
    graphSpId: rng.guid(),
    dlpRules,
    groups: tenant.groups.slice(0, 50).map((g) => ({ id: g.id, name: g.displayName })),
    ascii: false,
  };
  // JSON text holds no raw control characters, so "printable ASCII or DEL only" means "ASCII only".
  catalog.ascii = !/[^ -\u007f]/.test(JSON.stringify(catalog));
  return catalog;
}

// --- rendering -------------------------------------------------------------------------------------------------------

/** What a renderer knows about the record it renders. */
export interface RecordCore {
  /** Record Id (GUID). */
  id: string;
  /** CreationTime, epoch ms (whole seconds). */
  time: number;
  /** Index into the kind's variants. */
  variant: number;
  /** For a burst variant: the burst's number and the record's position in it (0-based). */
  burst?: { n: number; i: number };
}

// Records are written as JSON text directly (no intermediate objects): serving a million records is dominated by
// serialisation, and a template is several times faster than building objects for JSON.stringify. Every string that
// comes from tenant data or a constant list goes through `q` (JSON.stringify); generated strings (GUIDs, digits, the
// base-62 and hex alphabets) never need escaping.
// What JSON.stringify escapes in a string: quote, backslash, control characters, (lone) surrogates.
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const q = (s: string): string => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`);
const D2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const D3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** `YYYY-MM-DDTHH:MM:SS` (UTC, no offset): the CreationTime format. Allocation-free civil-date arithmetic. */
export function creationTime(ms: number): string {
  const secs = Math.floor(ms / 1000);
  const days = Math.floor(secs / 86400);
  let rem = secs - days * 86400;
  const hh = Math.floor(rem / 3600);
  rem -= hh * 3600;
  const mm = Math.floor(rem / 60);
  const ss = rem - mm * 60;
  // Howard Hinnant's days → civil date.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${D2[m]}-${D2[d]}T${D2[hh]}:${D2[mm]}:${D2[ss]}`;
}

/** ISO 8601 with milliseconds and `Z` (the format of nested timestamps such as `Sent`, `LastModifiedTime`). */
function isoZ(ms: number): string {
  const whole = Math.floor(ms / 1000) * 1000;
  return `${creationTime(whole)}.${D3[ms - whole]}Z`;
}

function clientIp(d: Draw, u: FeedUser): string {
  // A small share of activity comes from an address the user has not used before.
  if (d.chance(0.01)) return `${d.pick(IP_PREFIXES)}${d.int(1, 254)}.${d.int(0, 255)}.${d.int(1, 254)}`;
  return d.pick(u.ips);
}

/** `{"CreationTime":…,"Id":…,"Operation":…,"OrganizationId":…,"RecordType":…` (no closing brace). */
function head(c: AuditCatalog, core: RecordCore, opJson: string, recordType: number): string {
  return `{"CreationTime":"${creationTime(core.time)}","Id":"${core.id}","Operation":${opJson},"OrganizationId":${c.tenantIdJson},"RecordType":${recordType}`;
}

const FILES_J = FILES.map((name) => ({ name, ext: name.slice(name.lastIndexOf('.') + 1) }));

/** A file a record points at, with its JSON string literals precomputed (files repeat across records). */
interface FileRef {
  url: string;
  urlJson: string;
  siteUrl: string;
  siteUrlJson: string;
  /** `siteUrl` + `/` as a JSON literal (SharePoint's `SiteUrl`). */
  siteUrlSlashJson: string;
  nameJson: string;
  ext: string;
  site: AuditCatalog['sites'][number] | null;
}

const FILE_CACHE = new WeakMap<object, Map<string, FileRef>>();

function fileRef(owner: object, key: string, make: () => FileRef): FileRef {
  let m = FILE_CACHE.get(owner);
  if (!m) FILE_CACHE.set(owner, (m = new Map()));
  let f = m.get(key);
  if (!f) m.set(key, (f = make()));
  return f;
}

function makeFileRef(siteUrl: string, folder: string, name: string, ext: string, site: FileRef['site']): FileRef {
  const url = `${siteUrl}/${folder}/${name}`;
  return { url, urlJson: q(url), siteUrl, siteUrlJson: q(siteUrl), siteUrlSlashJson: q(`${siteUrl}/`), nameJson: q(name), ext, site };
}

function file(c: AuditCatalog, d: Draw, owner: FeedUser): FileRef {
  const fi = Math.floor(d.next() * FILES_J.length);
  const f = FILES_J[fi] as { name: string; ext: string };
  if (d.chance(0.3)) {
    // A OneDrive file: the user's own, or (guests have no OneDrive in the tenant) a member's shared with them.
    const who = owner.guest ? d.pick(c.members) : owner;
    return fileRef(who, String(fi), () =>
      makeFileRef(`${c.myHost}/personal/${who.upn.replace(/[@.#]/g, '_').toLowerCase()}`, 'Documents', f.name, f.ext, null),
    );
  }
  const site = d.pick(c.sites);
  return fileRef(site, String(fi), () => makeFileRef(site.url, 'Shared Documents', f.name, f.ext, site));
}

function threadId(d: Draw): string {
  return `19:${d.chars(44, BASE62)}@thread.v2`;
}

const APP_HOSTS = ['Word', 'Excel', 'PowerPoint', 'Teams', 'Outlook', 'bizchat'];
const MODELS_J = MODELS.map((m) => JSON.stringify(m));
const USER_AGENTS_J = USER_AGENTS.map(q);
const OP_J = new Map<string, string>();
function opJson(op: string): string {
  let j = OP_J.get(op);
  if (j === undefined) OP_J.set(op, (j = q(op)));
  return j;
}

function renderCopilot(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const v = core.variant;
  const user = core.burst ? burstUser(c.members, core.burst.n) : v === 3 ? d.pick(c.guests) : v === 4 ? d.pick(c.members) : d.pick(c.users);
  const appHost = v === 0 ? 'bizchat' : v === 2 ? 'Copilot Studio' : d.pick(APP_HOSTS);
  let contexts = '';
  if (appHost === 'Teams') contexts = `{"Id":"https://teams.microsoft.com/l/meetup-join/${encodeURIComponent(threadId(d))}/0","Type":"TeamsMeeting"}`;
  else if (appHost !== 'bizchat' && appHost !== 'Copilot Studio') {
    const f = file(c, d, user);
    contexts = `{"Id":${f.urlJson},"Type":"${f.ext}"}`;
  }
  const labelled = v === 3 || v === 4;
  const resourceCount = labelled ? d.int(1, 3) : d.int(0, 2);
  let resources = '';
  for (let i = 0; i < resourceCount; i++) {
    const f = file(c, d, user);
    // Labelled variants carry at least one label above General (the first resource); other variants none.
    const label = labelled && (i === 0 || d.chance(0.4)) ? (i === 0 ? d.pick(c.labels.slice(1)) : d.pick(c.labels)).id : null;
    resources += `${i > 0 ? ',' : ''}{"Id":${f.urlJson},"SiteUrl":${f.siteUrlJson},"Name":${f.nameJson},"Type":"${f.ext}","Action":"Read"${label ? `,"SensitivityLabelId":${q(label)}` : ''}}`;
  }
  const flagged = COPILOT_FLAGS[spec.variants[v]?.scenario ?? ''];
  if (flagged) {
    // Issue 20: flagged variants read one more file and state XPIADetected on every resource they read.
    const f = file(c, d, user);
    const extra = `{"Id":${f.urlJson},"SiteUrl":${f.siteUrlJson},"Name":${f.nameJson},"Type":"${f.ext}","Action":"Read"}`;
    resources = `${resources}${resources ? ',' : ''}${extra}`.replace(/"Action":"Read"/g, '"Action":"Read","XPIADetected":false');
    if (flagged.xpia) resources = resources.replace(/"XPIADetected":false(?![\s\S]*"XPIADetected")/, '"XPIADetected":true');
  }
  const turns = d.int(1, 3);
  let messages = '';
  let msgId = core.time - turns * 4000;
  const flags = COPILOT_FLAGS[spec.variants[v]?.scenario ?? ''];
  for (let i = 0; i < turns; i++) {
    const jb = flags ? `,"JailbreakDetected":${flags.jailbreak && i === 0}` : '';
    messages += `${i > 0 ? ',' : ''}{"Id":"${msgId}"${jb},"isPrompt":true}`;
    msgId += d.int(1500, 3500);
    messages += `,{"Id":"${msgId}"${flags ? ',"JailbreakDetected":false' : ''},"isPrompt":false}`;
    msgId += d.int(500, 1500);
  }
  const ip = clientIp(d, user);
  const region = d.chance(0.5) ? 'NAM' : 'EUR';
  let agent = '';
  if (v === 2) {
    const bot = d.pick(c.bots);
    agent = `,"AppIdentity":${q(`Copilot.Studio.${bot.id}`)},"AgentId":${q(bot.id)},"AgentName":${q(bot.name)}`;
  }
  const thread = threadId(d);
  const model = d.pick(MODELS_J);
  const plugin = appHost === 'bizchat' && d.chance(0.35) ? '{"Name":"BuiltIn","Id":"BingWebSearch"}' : '';
  return (
    `${head(c, core, '"CopilotInteraction"', 261)},"UserKey":${user.idJson},"UserType":${user.guest ? 10 : 0},"Version":1,"Workload":"Copilot","ClientIP":"${ip}","UserId":${user.upnJson},` +
    `"ClientRegion":"${region}","CopilotLogVersion":"1.0.0.0"${agent},"CopilotEventData":{"AppHost":"${appHost}","Contexts":[${contexts}],"ThreadId":"${thread}","MessageIds":[],` +
    `"Messages":[${messages}],"AccessedResources":[${resources}],"ModelTransparencyDetails":[${model}],"AISystemPlugin":[${plugin}]}}`
  );
}

/**
 * A Power Apps activity as Microsoft now sends it: RecordType 256 (PowerPlatformAdministratorActivity), workload
 * `PowerPlatform`, the app in `PropertyCollection` (`powerplatform.analytics.resource.type` `PowerApp`,
 * `…resource.power_app.id` / `.display_name`, the environment's id and name). Shape: the LaunchPowerApp
 * record of pnp/Microsoft365-Analytics-Insights `Tests.UnitTests/PowerPlatformAdminActivityRecordParseTests.cs` ("Real
 * LaunchPowerApp event sample (sanitised)", test/fixtures/real/audit/pnp-analytics-powerapps-launch-sanitised.json) and
 * the `PropertyCollection` example of Microsoft Learn "View Power Apps activity logs in Microsoft Purview"; the
 * top-level keys are the sample's, in the common schema's order like every other record here (the sample lists
 * `PropertyCollection` first; JSON readers do not depend on key order). Operation
 * names other than LaunchPowerApp are UNCONFIRMED (Learn lists the events by display name only); no public record shows
 * how a permission change names its recipient, so EditPowerAppRolePermission carries none (the former RecordType 45
 * `AdditionalInfo.permissionType`/`targetPrincipal` were EMULATOR).
 */
function renderPowerApps(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  if (variant.operation === 'PutConnection') return renderConnection(c, core, d, variant);
  const user = core.burst ? burstUser(c.members, core.burst.n) : d.chance(0.2) ? d.pick(c.admins) : d.pick(c.members);
  const app = d.pick(c.powerApps);
  const env = c.environments.find((e) => e.id === app.env) ?? { id: app.env, name: app.env };
  const ip = clientIp(d, user);
  const props: [string, string][] = [
    ['powerplatform.analytics.resource.power_app.display_name', app.name],
    ['powerplatform.analytics.resource.power_app.id', app.id],
    ['powerplatform.analytics.resource.environment.name', env.name],
    ['powerplatform.analytics.operation.is_successful', 'True'],
    ['powerplatform.analytics.correlation.id', d.guid()],
    ['enduser.ip_address', ip],
    ['user_agent.original', d.pick(USER_AGENTS)],
    ['powerplatform.analytics.resource.type', 'PowerApp'],
    ['version', '1.0'],
    ['type', 'PowerPlatformAdministratorActivityRecord'],
    ['powerplatform.analytics.activity.name', variant.operation],
    ['powerplatform.analytics.activity.id', core.id],
    ['powerplatform.analytics.resource.environment.id', env.id],
    ['enduser.id', user.id],
    ['powerplatform.analytics.resource.tenant.id', c.tenantId],
    ['enduser.principal_name', user.upn],
    ['enduser.role', user.admin ? 'Admin' : 'Maker'],
  ];
  if (variant.operation === 'PowerAppPermissionEdited') props.push(['targetuser.id', issue20ShareTarget(c, core, d).id]);
  return (
    `${head(c, core, opJson(variant.operation), 256)},"UserKey":${user.idJson},"UserType":${user.admin ? 2 : 0},"Version":1,"Workload":"PowerPlatform","ClientIP":"${ip}","UserId":${user.upnJson},` +
    `"EnvironmentId":${q(env.id)},"ResultStatus":"Succeeded","RequiresCustomerKeyEncryption":false,"PropertyCollection":[${nameValues(props)}]}`
  );
}

const LICENSES_J = ['Microsoft 365 E5', 'Microsoft 365 E3', 'Power Automate Premium'].map(q);

function renderFlow(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const user = core.burst ? burstUser(c.members, core.burst.n) : d.pick(c.members);
  const flow = d.pick(c.flows);
  const connectors = d.int(1, 3);
  const names: string[] = [];
  for (let i = 0; i < connectors; i++) {
    const n = d.pick(CONNECTOR_NAMES);
    if (!names.includes(n)) names.push(n);
  }
  const flowId = q(flow.id);
  let extra = '';
  if (variant.operation === 'PutPermissions') extra += `,"SharingPermission":${d.chance(0.5) ? 2 : 3},"RecipientUPN":${d.pick(c.users).upnJson}`;
  // Real flow records name the connectors in the definition, never an action's URL (Microsoft Learn "View Power
  // Automate activity logs": FlowConnectorNames). A flow calling any URL lists the HTTP connector; the near miss
  // calls Microsoft APIs through the Entra-authenticated HTTP connector.
  if (variant.scenario === 'flow.externalHttp') names.push('HTTP');
  if (variant.scenario === 'flow.microsoftHttp') names.push('HTTP with Microsoft Entra ID (preauthorized)');
  return (
    `${head(c, core, opJson(variant.operation), 30)},"ResultStatus":"Succeeded","UserKey":${user.idJson},"UserType":0,"Version":1,"Workload":"MicrosoftFlow","ClientIP":"${clientIp(d, user)}","ObjectId":${flowId},"UserId":${user.upnJson},` +
    `"FlowDetailsUrl":${q(`https://make.powerautomate.com/environments/${flow.env}/flows/${flow.id}/details`)},"LicenseDisplayName":${d.pick(LICENSES_J)},"UserTypeInitiated":1,"UserUPN":${user.upnJson}${extra},"FlowConnectorNames":${q(names.join(', '))}}`
  );
}

function nameValues(pairs: [string, string][]): string {
  let s = '';
  for (let i = 0; i < pairs.length; i++) {
    const [name, value] = pairs[i] as [string, string];
    s += `${i > 0 ? ',' : ''}{"Name":${q(name)},"Value":${q(value)}}`;
  }
  return s;
}

function renderPowerPlatformAdmin(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const op = variant.operation;
  const subject = componentRecordSubject(c, variant, d, core.burst);
  const user = subject ? subject.user : d.chance(0.3) ? d.pick(c.admins) : d.pick(c.members);
  const ip = clientIp(d, user);
  let objectId: string;
  let resource: [string, string][];
  if (op.startsWith('Bot')) {
    const noAuth = c.bots.filter((b) => b.authNone);
    const withAuth = c.bots.filter((b) => !b.authNone);
    const pool =
      variant.scenario === 'agent.authNone' || variant.scenario === 'agent.publishedAuthNone'
        ? noAuth.length > 0
          ? noAuth
          : c.bots
        : variant.scenario === 'agent.published' && withAuth.length > 0
          ? withAuth
          : c.bots;
    const env0 = c.environments[0] as { id: string; name: string };
    // A component record is about the component's own agent.
    const owner = subject?.component ? c.bots.find((b) => b.id === subject.component!.botId) : undefined;
    const bot = owner ?? (pool.length > 0 ? d.pick(pool) : { id: d.guid(), name: 'Agent', env: env0.id, envName: env0.name, authNone: false });
    objectId = bot.id;
    const env = c.environments.find((e) => e.id === bot.env) ?? { id: bot.env, name: bot.envName };
    resource = [
      ['powerplatform.analytics.resource.type', 'Bot'],
      ['powerplatform.analytics.resource.bot.id', bot.id],
      ['powerplatform.analytics.resource.bot.display_name', bot.name],
      ['powerplatform.analytics.resource.environment.id', env.id],
      ['powerplatform.analytics.resource.environment.name', env.name],
    ];
    if (op === 'BotUpdateOperation-BotAuthUpdate') {
      const modes = ['Integrated', 'Custom Azure AD', 'Generic OAuth2'];
      const change =
        variant.scenario === 'agent.authNone'
          ? [
              { PropertyName: 'AuthenticationMode', OldValue: d.pick(modes), NewValue: 'None' },
              { PropertyName: 'AuthenticationConnection', OldValue: 'Oauth2Connection', NewValue: '' },
              { PropertyName: 'AuthRedirectUrl', OldValue: 'https://token.botframework.com/.auth/web/redirect', NewValue: '' },
            ]
          : variant.scenario === 'agent.authWeakened'
            ? // Agent lifecycle (det2): Microsoft authentication to manual authentication, a weaker mode short of None.
              [{ PropertyName: 'AuthenticationMode', OldValue: 'Integrated', NewValue: d.chance(0.5) ? 'Custom Azure AD' : 'Generic OAuth2' }]
            : // Changed but not weakened (a near-miss for agent_authentication_weakened too): from None or generic
              // OAuth 2 to an Entra ID mode.
              [
                {
                  PropertyName: 'AuthenticationMode',
                  OldValue: d.chance(0.5) ? 'None' : 'Generic OAuth2',
                  NewValue: d.chance(0.5) ? 'Custom Azure AD' : 'Integrated',
                },
              ];
      resource.push(['powerplatform.analytics.resource.bot.update_details.change', JSON.stringify(change)]);
    }
    if (op === 'BotUpdateOperation-BotPublish') {
      // EMULATOR (UNCONFIRMED key): the agent's authentication mode at publication.
      resource.push(['powerplatform.analytics.resource.bot.authentication_mode', variant.scenario === 'agent.publishedAuthNone' ? 'None' : 'Integrated']);
    }
    // ── Agent lifecycle (det2): access control and component records.
    if (variant.scenario === 'agent.sharedWithEveryone' || variant.scenario === 'agent.sharedWithGroup') {
      // AccessControlPolicy labels of the `bot` table's `accesscontrolpolicy` options; Datadog's rule on BotShare reads
      // this property's new value `Any`.
      const change =
        variant.scenario === 'agent.sharedWithEveryone'
          ? { PropertyName: 'AccessControlPolicy', OldValue: d.chance(0.5) ? 'Copilot readers' : 'Group membership', NewValue: 'Any' }
          : { PropertyName: 'AccessControlPolicy', OldValue: 'Copilot readers', NewValue: 'Group membership' };
      resource.push(['powerplatform.analytics.resource.bot.update_details.change', JSON.stringify([change])]);
    } else if (op.startsWith('BotComponent')) {
      // EMULATOR (UNCONFIRMED keys): Learn's schema audit fields name BotComponentId and BotComponentType; the
      // PropertyCollection spelling follows `bot.id`. The tenant's component (id, `componenttype`) when it has one of
      // the record's kind; else a component of the feed's own: 16 knowledge source, 15 instructions, 9 topic.
      const kind = variant.scenario ? COMPONENT_SCENARIOS[variant.scenario] : undefined;
      const own = subject?.component;
      const type = own ? own.type : kind === 'knowledge' || kind === 'publicWebsiteKnowledge' ? 16 : kind === 'instructions' ? 15 : 9;
      resource.push(
        ['powerplatform.analytics.resource.bot_component.id', own ? own.id : d.guid()],
        ['powerplatform.analytics.resource.bot_component.type', String(type)],
      );
    } else if (op === 'BotUpdateOperation-BotShare') {
      resource.push([
        'powerplatform.analytics.resource.bot.update_details.change',
        JSON.stringify([{ PropertyName: 'SharedWith', OldValue: '', NewValue: d.pick(c.users).upn }]),
      ]);
    }
    // ── end agent lifecycle (det2)
  } else {
    const connector = d.pick(c.customConnectors);
    objectId = connector.id;
    const env = c.environments.find((e) => e.id === connector.env) ?? (c.environments[0] as { id: string; name: string });
    resource = [
      ['powerplatform.analytics.resource.type', 'CustomConnector'],
      ['powerplatform.analytics.resource.custom_connector.id', connector.id],
      ['powerplatform.analytics.resource.custom_connector.display_name', connector.name],
      ['powerplatform.analytics.resource.custom_connector.host', connector.host],
      ['powerplatform.analytics.resource.environment.id', env.id],
      ['powerplatform.analytics.resource.environment.name', env.name],
    ];
  }
  resource.push(
    ['version', '1.0'],
    ['type', 'PowerPlatformAdministratorActivityRecord'],
    ['powerplatform.analytics.operation.is_successful', 'True'],
    ['powerplatform.analytics.resource.telemetry_correlation.id', d.guid()],
    ['enduser.ip_address', ip],
    ['user_agent.original', d.pick(USER_AGENTS)],
    ['powerplatform.analytics.activity.name', op],
    ['powerplatform.analytics.activity.id', core.id],
    ['enduser.id', user.id],
    ['enduser.principal_name', user.upn],
    ['enduser.role', user.admin ? 'Admin' : 'Maker'],
    ['powerplatform.analytics.resource.tenant.id', c.tenantId],
  );
  return `${head(c, core, opJson(op), 256)},"ResultStatus":"Success","UserKey":${user.idJson},"UserType":${user.admin ? 2 : 0},"Version":1,"Workload":"PowerPlatform","ClientIP":"${ip}","ObjectId":${q(objectId)},"UserId":${user.upnJson},"PropertyCollection":[${nameValues(resource)}]}`;
}

function renderPowerPlatformDlp(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const user = d.pick(c.admins);
  const policy = d.pick(c.dlpPolicies);
  const info: Record<string, unknown> = { policyId: policy.id, policyType: policy.type, defaultConnectorClassification: 'General' };
  if (variant.scenario === 'dlp.policyWeakened') {
    // Three ways to weaken (learn dlp-activity-logging "Additional Info"): connectors moved out of Blocked (1–2), the
    // default group Blocked → General (3), or the scope narrowed from all environments (4).
    const way = d.int(1, 4);
    const connectorChanges = [
      {
        name: 'HTTP with Microsoft Entra ID',
        id: '/providers/Microsoft.PowerApps/apis/shared_webcontents',
        previousValue: { classification: 'Blocked' },
        currentValue: { classification: 'General' },
      },
      {
        name: 'Twitter',
        id: '/providers/Microsoft.PowerApps/apis/shared_twitter',
        previousValue: { classification: 'Blocked' },
        currentValue: { classification: 'Confidential' },
      },
    ];
    if (way <= 2) info.changeSet = { changedProperties: [], connectorChanges: connectorChanges.slice(0, way) };
    else if (way === 3)
      info.changeSet = {
        changedProperties: [{ name: 'DefaultConnectorClassification', previousValue: 'Blocked', currentValue: 'General' }],
        connectorChanges: [],
      };
    else {
      const narrowed = policy.type === 'AllEnvironments' ? 'OnlyEnvironments' : policy.type;
      info.policyType = narrowed;
      info.changeSet = { changedProperties: [{ name: 'DlpPolicyType', previousValue: 'AllEnvironments', currentValue: narrowed }], connectorChanges: [] };
    }
  } else if (variant.scenario === 'dlp.policyRenamed') {
    info.changeSet = { changedProperties: [{ name: 'ApiPolicyName', previousValue: `${policy.name} (old)`, currentValue: policy.name }], connectorChanges: [] };
  }
  return `${head(c, core, opJson(variant.operation), 187)},"ResultStatus":"Success","UserKey":${user.idJson},"UserType":2,"Version":1,"Workload":"PowerPlatform","ClientIP":"${clientIp(d, user)}","ObjectId":${q(policy.id)},"UserId":${user.upnJson},"AdditionalInfo":${q(JSON.stringify(info))}}`;
}

function renderPowerBi(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const op = (spec.variants[core.variant] as RecordVariant).operation;
  const user = d.chance(0.04) && c.guests.length > 0 ? d.pick(c.guests) : d.pick(c.members);
  const ws = d.pick(c.workspaces);
  const report = d.pick(ws.reports);
  const opJ = opJson(op);
  let item: string;
  if (op === 'ViewDashboard') {
    const dash = d.pick(ws.dashboards);
    const n = q(dash.name);
    item = `,"ItemName":${n},"ObjectId":${n},"DashboardName":${n},"DashboardId":${q(dash.id)},"ArtifactId":${q(dash.id)},"ArtifactName":${n},"ArtifactKind":"Dashboard","DistributionMethod":"Workspace","ConsumptionMethod":"Power BI Web"`;
  } else {
    const n = q(report.name);
    const rid = q(report.id);
    const distribution = d.pick(['Workspace', 'Workspace', 'Shared', 'App']);
    item = `,"ItemName":${n},"ObjectId":${n},"DatasetName":${n},"ReportName":${n},"DatasetId":${q(report.datasetId)},"ReportId":${rid},"ArtifactId":${rid},"ArtifactName":${n},"ArtifactKind":"Report","ReportType":"PowerBIReport","DistributionMethod":"${distribution}","ConsumptionMethod":"Power BI Web"`;
  }
  if (op === 'ExportReport')
    item += `,"ExportedArtifactInfo":{"ExportType":"${d.pick(['PDF', 'PowerPoint', 'Excel'])}","ArtifactType":"Report","ArtifactId":1}`;
  if (op === 'ShareReport') {
    const to = d.pick(c.users);
    const email = to.guest ? to.upn.slice(0, to.upn.indexOf('#EXT#')).replace(/_([^_]*)$/, '@$1') : to.upn;
    item += `,"SharingInformation":[{"RecipientEmail":${q(email)},"RecipientName":${to.nameJson},"ResharePermission":"Read"}]`;
  }
  if (op === 'PublishToWebReport') item += ',"ModelsSnapshots":[]';
  return (
    `${head(c, core, opJ, 20)},"UserType":0,"UserKey":"${user.puid}","Workload":"PowerBI","UserId":${user.upnJson},"ClientIP":"${clientIp(d, user)}","UserAgent":${d.pick(USER_AGENTS_J)},"Activity":${opJ},` +
    `"ResultStatus":"Succeeded","IsSuccess":true,"RequestId":"${d.guid()}","ActivityId":"${d.guid()}","WorkSpaceName":${q(ws.name)},"WorkspaceId":${q(ws.id)},"CapacityId":${q(c.capacity.id)},"CapacityName":${q(c.capacity.name)}${item}}`
  );
}

function aadActor(user: FeedUser): string {
  return `[{"ID":${user.upnJson},"Type":5},{"ID":"${user.puid}","Type":3},{"ID":${q(`User_${user.id}`)},"Type":2},{"ID":${user.idJson},"Type":2},{"ID":"User","Type":2}]`;
}

function aadSpTarget(spId: string, name: string, appId: string): string {
  const sp = q(spId);
  const app = q(appId);
  return `{"ID":${q(`ServicePrincipal_${spId}`)},"Type":2},{"ID":${sp},"Type":2},{"ID":"ServicePrincipal","Type":2},{"ID":${q(name)},"Type":1},{"ID":${app},"Type":2},{"ID":${app},"Type":4}`;
}

function modifiedProperties(list: [string, string, string][]): string {
  let s = '';
  for (let i = 0; i < list.length; i++) {
    const [name, next, old] = list[i] as [string, string, string];
    s += `${i > 0 ? ',' : ''}{"Name":${q(name)},"NewValue":${q(next)},"OldValue":${q(old)}}`;
  }
  return s;
}

function mdy(ms: number): string {
  const iso = creationTime(ms);
  return `${Number(iso.slice(5, 7))}/${Number(iso.slice(8, 10))}/${iso.slice(0, 4)} ${iso.slice(11)}`;
}

function renderEntra(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const op = variant.operation;
  const scenario = variant.scenario;
  const actor = scenario === 'entra.userConsent' ? d.pick(c.members) : d.chance(0.7) ? d.pick(c.admins) : d.pick(c.members);
  const ua = d.pick(USER_AGENTS);
  let target: string;
  let modified: [string, string, string][];
  let objectId: string;
  let category = 'ServicePrincipal';
  if (op === 'Consent to application.') {
    const app = d.pick(c.apps);
    const admin = scenario === 'entra.adminConsent';
    const scope = d.pick([
      'User.Read',
      'Mail.Read offline_access',
      'Files.Read.All Sites.Read.All',
      'Mail.ReadWrite Mail.Send',
      'Calendars.Read User.ReadBasic.All',
    ]);
    target = aadSpTarget(app.spId, app.name, app.appId);
    objectId = app.spId;
    modified = [
      ['ConsentContext.IsAdminConsent', admin ? 'True' : 'False', ''],
      ['ConsentContext.IsAppOnly', 'False', ''],
      ['ConsentContext.OnBehalfOfAll', admin ? 'True' : 'False', ''],
      ['ConsentContext.Tags', 'WindowsAzureActiveDirectoryIntegratedApp', ''],
      [
        'ConsentAction.Permissions',
        `[] => [[Id: ${d.chars(43, `${BASE62}_-`)}, ClientId: ${app.spId}, PrincipalId: ${admin ? '' : actor.id}, ResourceId: ${c.graphSpId}, ConsentType: ${admin ? 'AllPrincipals' : 'Principal'}, Scope:  ${scope}, CreatedDateTime: , LastModifiedDateTime ]]; `,
        '',
      ],
      ['TargetId.ServicePrincipalNames', app.appId, ''],
    ];
  } else if (op === 'Add service principal credentials.') {
    const app = d.pick(c.apps);
    target = aadSpTarget(app.spId, app.name, app.appId);
    objectId = app.spId;
    const keyType = d.chance(0.7) ? 'Password' : 'AsymmetricX509Cert';
    const display = keyType === 'Password' ? d.pick(['automation', 'prod', 'key1', '']) : `CN=${app.name}`;
    modified = [
      ['KeyDescription', `["[KeyIdentifier=${d.guid()},KeyType=${keyType},KeyUsage=Verify,DisplayName=${display}]"]`, '[]'],
      ['Included Updated Properties', 'KeyDescription', ''],
      ['TargetId.ServicePrincipalNames', app.appId, ''],
    ];
  } else if (op === 'Add app role assignment to service principal.') {
    const app = d.pick(c.apps);
    const role = d.pick(GRAPH_APP_ROLES);
    target = `${aadSpTarget(c.graphSpId, 'Microsoft Graph', GRAPH_APP_ID)},{"ID":"https://graph.microsoft.com","Type":4}`;
    objectId = c.graphSpId;
    const when = mdy(core.time);
    modified = [
      ['AppRole.Id', role.id, ''],
      ['AppRole.Value', role.value, ''],
      ['AppRole.DisplayName', role.name, ''],
      ['AppRoleAssignment.CreatedDateTime', when, ''],
      ['AppRoleAssignment.LastModifiedDateTime', when, ''],
      ['ServicePrincipal.ObjectID', app.spId, ''],
      ['ServicePrincipal.DisplayName', app.name, ''],
      ['ServicePrincipal.AppId', app.appId, ''],
      ['ServicePrincipal.Name', app.appId, ''],
      ['TargetId.ServicePrincipalNames', `https://graph.microsoft.com;${GRAPH_APP_ID}`, ''],
    ];
  } else if (op === 'Add member to role.' || op === 'Disable account.' || op === 'Invite external user.') {
    ({ target, modified, objectId, category } = issue20Entra(c, d, scenario));
  } else if (op === 'Add member to group.') {
    const member = d.pick(c.users);
    const group = c.groups.length > 0 ? d.pick(c.groups) : { id: d.guid(), name: 'Project Team' };
    category = 'GroupManagement';
    target = `{"ID":${q(`User_${member.id}`)},"Type":2},{"ID":${member.idJson},"Type":2},{"ID":"User","Type":2},{"ID":${member.upnJson},"Type":5},{"ID":"${member.puid}","Type":3}`;
    objectId = member.upn;
    modified = [
      ['Group.ObjectID', group.id, ''],
      ['Group.DisplayName', group.name, ''],
      ['Group.WellKnownObjectName', '', ''],
    ];
  } else if (op === 'Update group.') {
    const group = c.groups.length > 0 ? d.pick(c.groups) : { id: d.guid(), name: 'Project Team' };
    category = 'GroupManagement';
    target = `{"ID":${q(`Group_${group.id}`)},"Type":2},{"ID":${q(group.id)},"Type":2},{"ID":"Group","Type":2},{"ID":${q(group.name)},"Type":1}`;
    objectId = group.id;
    modified = [
      ['Description', JSON.stringify([`${group.name} collaboration space`]), JSON.stringify([group.name])],
      ['Included Updated Properties', 'Description', ''],
    ];
  } else {
    const who = d.pick(c.users);
    category = 'UserManagement';
    target = `{"ID":${q(`User_${who.id}`)},"Type":2},{"ID":${who.idJson},"Type":2},{"ID":"User","Type":2},{"ID":${who.upnJson},"Type":5},{"ID":"${who.puid}","Type":3}`;
    objectId = who.upn;
    const prop = d.pick(['JobTitle', 'Department', 'TelephoneNumber', 'StreetAddress']);
    modified = [
      [prop, JSON.stringify([d.pick(['Analyst', 'Finance', '+1 425 555 0142', '1 Main St'])]), '[]'],
      ['Included Updated Properties', prop, ''],
      ['TargetId.UserType', who.guest ? 'Guest' : 'Member', ''],
    ];
  }
  // Azure AD records: "the IP address isn't logged and the value for the ClientIP property is null" (schema doc).
  return (
    `${head(c, core, opJson(op), 8)},"ResultStatus":"Success","UserKey":${q(`${actor.puid}@${c.domain}`)},"UserType":${actor.admin ? 2 : 0},"Version":1,"Workload":"AzureActiveDirectory","ClientIP":null,"ObjectId":${q(objectId)},"UserId":${actor.upnJson},` +
    `"AzureActiveDirectoryEventType":1,"ExtendedProperties":[{"Name":"additionalDetails","Value":${q(JSON.stringify({ 'User-Agent': ua }))}},{"Name":"extendedAuditEventCategory","Value":"${category}"}],` +
    `"ModifiedProperties":[${modifiedProperties(modified)}],"Actor":${aadActor(actor)},"ActorContextId":${c.tenantIdJson},"ActorIpAddress":"${clientIp(d, actor)}","InterSystemsId":"${d.guid()}","IntraSystemId":"${d.guid()}","SupportTicketId":"",` +
    `"Target":[${target}],"TargetContextId":${c.tenantIdJson}}`
  );
}

const CLIENT_INFO_J = ['Client=OWA;Action=ViaProxy', 'Client=REST;Client=RESTSystem;;', 'Client=MSExchangeRPC'].map(q);
const FOLDERS_J = ['\\Inbox', '\\Inbox', '\\Sent Items', '\\Archive'].map(q);
const SENT_ITEMS_J = q('\\Sent Items');
const SUBJECTS_J = ['Re: Q3 numbers', 'Contract draft', 'Weekly update', 'Meeting notes', 'FW: Invoice 4432', 'Offsite agenda'].map(q);
const LOWER = BASE62.slice(0, 26);

function renderExchange(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const user = d.pick(c.members);
  const ip = clientIp(d, user);
  const ownerSid = user.sid;
  const server = `${user.mailboxServer} (15.20.${d.int(7000, 8999)}.${D3[d.int(1, 40)]})`;
  const common =
    `,"ResultStatus":"Succeeded","UserKey":"${user.puid}","UserType":0,"Version":1,"Workload":"Exchange","ClientIP":"${ip}","UserId":${user.upnJson},"AppId":"00000002-0000-0ff1-ce00-000000000000","ClientAppId":"",` +
    `"ClientIPAddress":"${ip}","ClientInfoString":${d.pick(CLIENT_INFO_J)},"ExternalAccess":false,"InternalLogonType":0,"LogonType":0,"LogonUserSid":"${ownerSid}","MailboxGuid":"${user.mailboxGuid}","MailboxOwnerSid":"${ownerSid}",` +
    `"MailboxOwnerUPN":${user.upnJson},"OrganizationName":${c.domainJson},"OriginatingServer":"${server}"`;
  const messageId = `<${d.chars(12, LOWER)}${d.int(1000, 9999)}@${user.mailboxServer}.namprd03.prod.outlook.com>`;
  if (variant.operation === 'MailItemsAccessed') {
    const items = d.int(1, 4);
    let folderItems = '';
    for (let i = 0; i < items; i++)
      folderItems += `${i > 0 ? ',' : ''}{"InternetMessageId":${q(i === 0 ? messageId : `<${d.chars(14, LOWER)}@${c.domain}>`)},"SizeInBytes":${d.int(4000, 250000)}}`;
    return (
      `${head(c, core, '"MailItemsAccessed"', 50)}${common},"OperationCount":${items},"OperationProperties":[{"Name":"MailAccessType","Value":"${d.chance(0.8) ? 'Bind' : 'Sync'}"},{"Name":"IsThrottled","Value":"False"}],` +
      `"SessionId":"${d.guid()}","Folders":[{"FolderItems":[${folderItems}],"Id":"LgAAAAD${d.chars(40, BASE62)}AAAB","Path":${d.pick(FOLDERS_J)}}]}`
    );
  }
  return (
    `${head(c, core, '"Send"', 2)}${common},"ObjectId":"","SessionId":"${d.guid()}","Item":{"Id":"RgAAAAD${d.chars(40, BASE62)}AAAJ","InternetMessageId":${q(messageId)},` +
    `"ParentFolder":{"Id":"LgAAAAD${d.chars(40, BASE62)}AAAB","Path":${SENT_ITEMS_J}},"SizeInBytes":${d.int(3000, 400000)},"Subject":${d.pick(SUBJECTS_J)}}}`
  );
}

function renderSharePoint(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const op = (spec.variants[core.variant] as RecordVariant).operation;
  const user = d.pick(c.users);
  const f = file(c, d, user);
  return (
    `${head(c, core, opJson(op), 6)},"UserKey":"i:0h.f|membership|${user.puid.toLowerCase()}@live.com","UserType":0,"Version":1,"Workload":"${f.site ? 'SharePoint' : 'OneDrive'}","ClientIP":"${clientIp(d, user)}","ObjectId":${f.urlJson},"UserId":${user.upnJson},` +
    `"CorrelationId":"${d.guid()}","EventSource":"SharePoint","ItemType":"File","ListId":"${d.guid()}","ListItemUniqueId":"${d.guid()}","Site":"${f.site ? f.site.id : d.guid()}","UserAgent":${d.pick(USER_AGENTS_J)},` +
    `"WebId":"${f.site ? f.site.webId : d.guid()}","HighPriorityMediaProcessing":false,"SourceFileExtension":"${f.ext}","SiteUrl":${f.siteUrlSlashJson},"SourceFileName":${f.nameJson},"SourceRelativeUrl":"${f.site ? 'Shared Documents' : 'Documents'}"}`
  );
}

const DLP_SUBJECTS_J = ['Customer export', 'Payroll file', 'Card details for booking', 'Wire instructions'].map(q);

function renderDlp(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const user = d.pick(c.members);
  const rule = d.pick(c.dlpRules);
  const count = d.int(1, 25);
  const actions = d.pick(['["NotifyUser"]', '["NotifyUser","GenerateIncidentReport"]', '["BlockAccess"]']);
  const policy =
    `{"PolicyId":${q(rule.policyId)},"PolicyName":${q(rule.policyName)},"Rules":[{"Actions":${actions},"ConditionsMatched":{"ConditionMatchedInNewScheme":true,"SensitiveInformation":[{"Confidence":85,"Count":${count},"Location":null,` +
    `"SensitiveType":${q(rule.sitId)},"SensitiveInformationTypeName":${q(rule.sitName)},"UniqueCount":${Math.max(1, count - d.int(0, count - 1))},"SensitiveInformationDetailedClassificationAttributes":[{"Confidence":85,"Count":${count},"IsMatch":true}]}]},` +
    `"ManagementRuleId":"${d.guid()}","RuleId":${q(rule.ruleId)},"RuleMode":"Enable","RuleName":${q(rule.ruleName)},"Severity":"${d.pick(['Low', 'Medium', 'High'])}"}]}`;
  const ip = clientIp(d, user);
  const incident = d.guid();
  let workload: string;
  let objectId: string;
  let meta: string;
  if (variant.recordType === 11) {
    const f = file(c, d, user);
    const url = f.urlJson;
    workload = f.site ? 'SharePoint' : 'OneDrive';
    objectId = url;
    meta =
      `,"SharePointMetaData":{"From":${user.upnJson},"itemCreationTime":"${isoZ(core.time - d.int(86_400, 90 * 86_400) * 1000)}","SiteCollectionGuid":"${f.site ? f.site.id : d.guid()}","SiteCollectionUrl":${f.siteUrlJson},"FileID":"${d.guid()}",` +
      `"FileName":${f.nameJson},"FileOwner":${user.nameJson},"FilePathUrl":${url},"DocumentLastModifier":${user.upnJson},"DocumentSharer":${user.upnJson},"UniqueId":"${d.guid()}","LastModifiedTime":"${isoZ(core.time - d.int(60, 86_400) * 1000)}",` +
      `"IsViewableByExternalUsers":${d.chance(0.2)},"IsVisibleOnlyToOdbOwner":false}`;
  } else {
    const to = d.pick(c.users);
    const external = `${d.pick(['jordan', 'alex', 'sam', 'robin'])}@${d.pick(['gmail.com', 'outlook.com', 'partner.example'])}`;
    const recipient = d.chance(0.6) ? q(external) : to.upnJson;
    const msgId = q(`<${d.chars(14, LOWER)}@${c.domain}>`);
    workload = 'Exchange';
    objectId = msgId;
    meta = `,"ExchangeMetaData":{"MessageID":${msgId},"From":${user.upnJson},"To":[${recipient}],"CC":[],"BCC":[],"Subject":${d.pick(DLP_SUBJECTS_J)},"Sent":"${isoZ(core.time - d.int(1, 30) * 1000)}","RecipientCount":1,"UniqueID":"${d.guid()}"}`;
  }
  return (
    `${head(c, core, '"DlpRuleMatch"', variant.recordType)},"UserKey":"DlpAgent","UserType":4,"Version":1,"Workload":"${workload}","ClientIP":"${ip}","ObjectId":${objectId},"UserId":${user.upnJson},` +
    `"IncidentId":"${incident}","PolicyDetails":[${policy}],"SensitiveInfoDetectionIsIncluded":false${meta}}`
  );
}

/**
 * Renders one record of a kind as JSON text (keys in the order Microsoft serialises the common schema). `draw` must be
 * seeded from the record (see `recordHash`, salt 0) so the record is reproducible.
 */
export function renderRecordJson(kind: KindSpec, catalog: AuditCatalog, core: RecordCore, draw: Draw): string {
  switch (kind.kind) {
    case 'copilot':
      // Issue 20: the kind's plugin and settings variants (RecordTypes 310–325) have their own shape.
      return (kind.variants[core.variant] as RecordVariant).recordType === 261
        ? renderCopilot(catalog, core, draw, kind)
        : renderCopilotAdmin(catalog, core, draw, kind);
    case 'powerApps':
      return renderPowerApps(catalog, core, draw, kind);
    case 'flow':
      return renderFlow(catalog, core, draw, kind);
    case 'powerPlatformAdmin':
      return renderPowerPlatformAdmin(catalog, core, draw, kind);
    case 'powerPlatformDlp':
      return renderPowerPlatformDlp(catalog, core, draw, kind);
    case 'powerBi':
      return renderPowerBi(catalog, core, draw, kind);
    case 'entra':
      return renderEntra(catalog, core, draw, kind);
    case 'exchange':
      return renderExchange(catalog, core, draw, kind);
    case 'sharePoint':
      return renderSharePoint(catalog, core, draw, kind);
    case 'dlp':
      return renderDlp(catalog, core, draw, kind);
  }
}

/** The feed seed (uint32) of a setting value. */
export function feedSeed(seed: number | string): number {
  return seedToUint32(seed);
}

// --- issue 20: records of the Sentinel-peer detections ------------------------------------------------------------
// Kept apart from the shared renderers above (other variants are added to the same file in parallel).

/** Which issue-20 Copilot variants state the safety flags, and which flag is raised. */
const COPILOT_FLAGS: Record<string, { jailbreak: boolean; xpia: boolean }> = {
  'copilot.jailbreak': { jailbreak: true, xpia: false },
  'copilot.xpia': { jailbreak: false, xpia: true },
  'copilot.flagsClear': { jailbreak: false, xpia: false },
};

/** The user of burst `n`: consecutive bursts of a stream come from different users (a repeat only after the pool). */
function burstUser(pool: FeedUser[], n: number): FeedUser {
  return pool[n % pool.length] as FeedUser;
}

const COPILOT_PLUGINS = ['ServiceNow', 'Contoso Tickets', 'Jira Cloud', 'Partner Pricing API', 'Website: docs.contoso.example'];

/**
 * A Copilot plugin or settings record (RecordTypes 310 CreateCopilotPlugin, 313 EnableCopilotPlugin, 314
 * DisableCopilotPlugin, 325 UpdateCopilotSettings): the common schema, workload `Copilot`, and the change as
 * `CopilotEventData.Resource[{Property, OriginalValue, NewValue}]` — the fields Sentinel's Microsoft Copilot rules read
 * from `LLMEventData` (`Resource[0].Property`, `OriginalValue`, `NewValue`). Operation names are Purview's activity
 * names (`CreatePlugin`, `EnablePlugin`, `DisableCopilotPlugin`, `UpdateTenantSettings`). EMULATOR (UNCONFIRMED): no
 * published record shows these records whole; the nesting under `CopilotEventData` and the values of a creation are
 * inferred.
 */
function renderCopilotAdmin(c: AuditCatalog, core: RecordCore, d: Draw, spec: KindSpec): string {
  const variant = spec.variants[core.variant] as RecordVariant;
  const scenario = variant.scenario ?? '';
  const admin = scenario === 'copilotPlugin.createdByAdmin' || scenario.startsWith('copilotSettings.');
  const user = core.burst ? burstUser(c.members, core.burst.n) : admin ? d.pick(c.admins) : d.pick(c.members);
  const plugin = core.burst ? (COPILOT_PLUGINS[core.burst.n % COPILOT_PLUGINS.length] as string) : d.pick(COPILOT_PLUGINS);
  const change: Record<string, string> = { Property: plugin };
  if (scenario === 'copilotPlugin.reenabled' || scenario === 'copilotPlugin.toggledOn')
    Object.assign(change, { OriginalValue: 'Disabled', NewValue: 'Enabled' });
  if (scenario === 'copilotPlugin.toggledOff') Object.assign(change, { OriginalValue: 'Enabled', NewValue: 'Disabled' });
  if (scenario === 'copilotSettings.fileUploadsDisabled') Object.assign(change, { Property: 'FileUploads', OriginalValue: 'Enabled', NewValue: 'Disabled' });
  if (scenario === 'copilotSettings.fileUploadsEnabled') Object.assign(change, { Property: 'FileUploads', OriginalValue: 'Disabled', NewValue: 'Enabled' });
  return (
    `${head(c, core, opJson(variant.operation), variant.recordType)},"UserKey":${user.idJson},"UserType":${admin ? 2 : 0},"Version":1,"Workload":"Copilot","ClientIP":"${clientIp(d, user)}","UserId":${user.upnJson},` +
    `"CopilotLogVersion":"1.0.0.0","CopilotEventData":{"Resource":[${JSON.stringify(change)}]}}`
  );
}

const CONNECTORS_J = ['shared_sql', 'shared_office365', 'shared_sharepointonline', 'shared_azureblob', 'shared_salesforce'];

/**
 * A connection created in an environment (`PutConnection`, RecordType 256): the Power Apps record form with the
 * connection in `powerplatform.analytics.resource.connection.id` and the environment's id and name, the properties
 * Sentinel's "Power Platform - Connector added to a sensitive environment" reads. `connection.production` picks a
 * Production environment (when the tenant has one), `connection.nonProduction` any other. EMULATOR (UNCONFIRMED): the
 * `resource.type` value `Connection` and the connection id's form.
 */
function renderConnection(c: AuditCatalog, core: RecordCore, d: Draw, variant: RecordVariant): string {
  const user = d.pick(c.members);
  const production = c.environments.filter((e) => e.sku === 'Production');
  const other = c.environments.filter((e) => e.sku !== 'Production');
  const pool = variant.scenario === 'connection.production' ? production : other;
  const env = d.pick(pool.length > 0 ? pool : c.environments);
  const ip = clientIp(d, user);
  const props: [string, string][] = [
    ['powerplatform.analytics.resource.type', 'Connection'],
    ['powerplatform.analytics.resource.connection.id', `${d.pick(CONNECTORS_J)}-${d.guid().replace(/-/g, '')}`],
    ['powerplatform.analytics.resource.environment.id', env.id],
    ['powerplatform.analytics.resource.environment.name', env.name],
    ['powerplatform.analytics.operation.is_successful', 'True'],
    ['enduser.ip_address', ip],
    ['user_agent.original', d.pick(USER_AGENTS)],
    ['version', '1.0'],
    ['type', 'PowerPlatformAdministratorActivityRecord'],
    ['powerplatform.analytics.activity.name', variant.operation],
    ['powerplatform.analytics.activity.id', core.id],
    ['enduser.id', user.id],
    ['enduser.principal_name', user.upn],
    ['enduser.role', user.admin ? 'Admin' : 'Maker'],
    ['powerplatform.analytics.resource.tenant.id', c.tenantId],
  ];
  return (
    `${head(c, core, opJson(variant.operation), 256)},"UserKey":${user.idJson},"UserType":0,"Version":1,"Workload":"PowerPlatform","ClientIP":"${ip}","UserId":${user.upnJson},` +
    `"EnvironmentId":${q(env.id)},"ResultStatus":"Succeeded","PropertyCollection":[${nameValues(props)}]}`
  );
}

/** Entra roles of the issue-20 role records: template id, display name (Microsoft Entra built-in roles reference). */
const PP_ADMIN_ROLES = [
  { id: '11648597-926c-4cf3-9c36-bcebb0ba8dcc', name: 'Power Platform Administrator' },
  { id: '44367163-eba1-44c3-98af-f5787879f96a', name: 'Dynamics 365 Administrator' },
];
/** Near misses: the two roles of the recorded "Add member to role." records (test/fixtures/real/audit). */
const OTHER_ROLES = [
  { id: 'f2ef992c-3afb-46b9-b7cf-a126ee74c451', name: 'Global Reader', wellKnown: 'GlobalReaders' },
  { id: '729827e3-9c14-49f7-bb1b-9608f156bbb8', name: 'Helpdesk Administrator', wellKnown: 'HelpdeskAdmins' },
];

/**
 * The target and changes of an issue-20 directory record: "Add member to role." (a Power Platform administrator role,
 * or another role) in the shape of the recorded ones (Role.ObjectID, Role.DisplayName, Role.TemplateId; ObjectId and
 * Target Type 5 = the member's UPN), and "Disable account." of a member or a guest (AccountEnabled [true] → [false],
 * as Entra's "Update user"-style records list changed properties). The Power Platform roles' WellKnownObjectName is
 * not stated (not seen in a record).
 */
function issue20Entra(c: AuditCatalog, d: Draw, scenario: string | undefined) {
  const who = (scenario === 'entra.guestDisabled' || scenario === 'entra.guestInvited') && c.guests.length > 0 ? d.pick(c.guests) : d.pick(c.members);
  const target = `{"ID":${q(`User_${who.id}`)},"Type":2},{"ID":${who.idJson},"Type":2},{"ID":"User","Type":2},{"ID":${who.upnJson},"Type":5},{"ID":"${who.puid}","Type":3}`;
  let modified: [string, string, string][];
  let category: string;
  if (scenario === 'entra.powerPlatformAdminRole' || scenario === 'entra.otherRole') {
    const role = scenario === 'entra.otherRole' ? d.pick(OTHER_ROLES) : { ...d.pick(PP_ADMIN_ROLES), wellKnown: null };
    modified = [
      ['Role.ObjectID', d.guid(), ''],
      ['Role.DisplayName', role.name, ''],
      ['Role.TemplateId', role.id, ''],
      ...(role.wellKnown ? [['Role.WellKnownObjectName', role.wellKnown, ''] as [string, string, string]] : []),
    ];
    category = 'Role';
  } else if (scenario === 'entra.guestInvited') {
    // EMULATOR (UNCONFIRMED): no published invitation record shows its ModifiedProperties; the guest is in Target.
    modified = [];
    category = 'UserManagement';
  } else {
    modified = [
      ['AccountEnabled', '[false]', '[true]'],
      ['Included Updated Properties', 'AccountEnabled', ''],
      ['TargetId.UserType', who.guest ? 'Guest' : 'Member', ''],
    ];
    category = 'UserManagement';
  }
  return { target, modified, objectId: who.upn, category };
}
/**
 * Who a Power Apps permission change shares with (`targetuser.id`, the property Sentinel's bulk-sharing rule reads;
 * EMULATOR: no public record shows it): a burst of `powerApps.sharedToNewGuests` goes to the tenant's guests in turn
 * (invited by `entra.guestInvited` records), `powerApps.sharedToMember` to a member.
 */
function issue20ShareTarget(c: AuditCatalog, core: RecordCore, d: Draw): FeedUser {
  return core.burst ? burstShareTarget(c, core.burst) : d.pick(c.members);
}

/** Who record `i` of share burst `n` shares with: the tenant's guests in turn (members in a tenant without guests). */
export function burstShareTarget(c: AuditCatalog, burst: { n: number; i: number }): FeedUser {
  const pool = c.guests.length > 0 ? c.guests : c.members;
  return pool[(burst.n + burst.i) % pool.length] as FeedUser;
}
// --- end issue 20 ---------------------------------------------------------------------------------------------------
