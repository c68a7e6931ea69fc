/**
 * The frameworks and peer baselines Vigil's checks and detections are mapped to, as data: every item with its id and
 * its name as its publisher writes it, and, where no check or detection of Vigil covers it, why (when the reason is
 * known). Check metadata (`frameworks`, `peers`) and detection metadata (`frameworks`, `peers`) refer to these items;
 * the compliance view (`reporting/compliance.ts`), docs/peers.md and the tests that keep the metadata in step read
 * this catalogue. A metadata reference to an id missing here fails test/unit/compliance.test.ts: add the item here,
 * with its source.
 *
 * Sources (facts only; names copied exactly):
 * - OWASP Top 10 for LLM Applications 2025: https://genai.owasp.org/llm-top-10/ (LLM01:2025 … LLM10:2025).
 * - MITRE ATLAS 5.6.0: github.com/mitre-atlas/atlas-data `dist/ATLAS.yaml` at commit
 *   8ee2c689a7d3c65ddf2bfe4950a4f3ecffa6f48b (`matrices[0].techniques[].id/name`; a sub-technique is written
 *   "Parent: Sub", as https://atlas.mitre.org shows it). Only the techniques that apply to agents and LLM applications.
 * - MITRE ATT&CK Enterprise: https://attack.mitre.org/techniques/ (the cloud and SaaS techniques Vigil's rules cite
 *   or are likely to cite; a sub-technique is written "Parent: Sub").
 * - ScubaGear: github.com/cisagov/ScubaGear `PowerShell/ScubaGear/baselines/powerbi.md` and `powerplatform.md` at
 *   commit 4d34e9a48e38ce5c2e14c0fdfbaee53e57594ae2 (each `#### MS.<PRODUCT>.x.yv1` heading and its policy sentence).
 * - Maester: github.com/maester365/maester `tests/Maester/AIAgent/Test-AIAgentSecurity.Tests.ps1` at commit
 *   6bf1d98f094fc7a68e449d2f40f73ef820b72ee3 (the `It "MT.11xx: …"` titles).
 * - Microsoft Sentinel: github.com/Azure/Azure-Sentinel `Solutions/Microsoft Business Applications/Analytic Rules/`
 *   (the Power Apps, Power Automate and Power Platform rules) and `Solutions/Microsoft Copilot/Analytic Rules/` (every
 *   rule): the `name:` of each YAML file.
 */

/** The ids of the frameworks and baselines in the catalogue (metadata `frameworks` keys for the first three). */
export const FRAMEWORK_IDS = ['owasp-llm-2025', 'mitre-atlas', 'mitre-attack', 'scubagear', 'maester', 'sentinel'] as const;
/** One of {@link FRAMEWORK_IDS}. */
export type FrameworkId = (typeof FRAMEWORK_IDS)[number];

/** One item of a framework: a risk, a technique, a peer's policy, test or rule. */
interface FrameworkItem {
  /** As the publisher writes it: `LLM01`, `AML.T0051.001`, `T1098.003`, `MS.POWERBI.1.1v1`, `MT.1113`, or (Sentinel, whose rules have GUIDs) the rule's GUID. */
  id: string;
  /** As the publisher writes it (Sentinel: the rule's display name, which metadata quotes). */
  name: string;
  /** Why no check or detection covers it, shown only while none does. */
  notCovered?: string;
}

/** A framework or a peer's baseline. */
export interface Framework {
  id: FrameworkId;
  name: string;
  /** A name short enough for a table cell (`OWASP LLM 2025`, `ScubaGear`); {@link Framework.name} says it in full. */
  shortName: string;
  /** `framework`: referred to from metadata `frameworks[id]` as `"<item id>: <name>"`; `peer`: from metadata `peers` as `"<prefix> <item id or quoted name> …"`. */
  kind: 'framework' | 'peer';
  /** For peers: the word a `peers` string starts with (`ScubaGear`, `Maester`, `Sentinel`). */
  prefix?: string;
  /** The published version the items come from, when it has one. */
  version: string | null;
  /** Where the items were taken from. */
  source: string;
  items: FrameworkItem[];
}

/** The catalogue, in the order the compliance view and docs/peers.md show it. */
export const FRAMEWORKS: readonly Framework[] = [
  {
    id: 'owasp-llm-2025',
    name: 'OWASP Top 10 for LLM Applications 2025',
    shortName: 'OWASP LLM 2025',
    kind: 'framework',
    version: '2025',
    source: 'https://genai.owasp.org/llm-top-10/',
    items: [
      { id: 'LLM01', name: 'Prompt Injection' },
      { id: 'LLM02', name: 'Sensitive Information Disclosure' },
      { id: 'LLM03', name: 'Supply Chain' },
      { id: 'LLM04', name: 'Data and Model Poisoning' },
      { id: 'LLM05', name: 'Improper Output Handling' },
      { id: 'LLM06', name: 'Excessive Agency' },
      { id: 'LLM07', name: 'System Prompt Leakage' },
      {
        id: 'LLM08',
        name: 'Vector and Embedding Weaknesses',
        notCovered: 'not covered, because Vigil does not see the vector stores and embeddings behind knowledge sources (Dataverse search, Azure AI Search)',
      },
      { id: 'LLM09', name: 'Misinformation' },
      { id: 'LLM10', name: 'Unbounded Consumption' },
    ],
  },
  {
    id: 'mitre-atlas',
    name: 'MITRE ATLAS',
    shortName: 'MITRE ATLAS',
    kind: 'framework',
    version: '5.6.0',
    source: 'https://github.com/mitre-atlas/atlas-data/blob/8ee2c689a7d3c65ddf2bfe4950a4f3ecffa6f48b/dist/ATLAS.yaml',
    items: [
      { id: 'AML.T0010', name: 'AI Supply Chain Compromise' },
      { id: 'AML.T0010.005', name: 'AI Supply Chain Compromise: AI Agent Tool' },
      { id: 'AML.T0011', name: 'User Execution' },
      { id: 'AML.T0011.002', name: 'User Execution: Poisoned AI Agent Tool' },
      { id: 'AML.T0012', name: 'Valid Accounts' },
      { id: 'AML.T0024', name: 'Exfiltration via AI Inference API' },
      { id: 'AML.T0025', name: 'Exfiltration via Cyber Means' },
      { id: 'AML.T0029', name: 'Denial of AI Service' },
      { id: 'AML.T0034', name: 'Cost Harvesting' },
      { id: 'AML.T0034.002', name: 'Cost Harvesting: Agentic Resource Consumption' },
      { id: 'AML.T0040', name: 'AI Model Inference API Access' },
      { id: 'AML.T0051', name: 'LLM Prompt Injection' },
      { id: 'AML.T0051.000', name: 'LLM Prompt Injection: Direct' },
      { id: 'AML.T0051.001', name: 'LLM Prompt Injection: Indirect' },
      { id: 'AML.T0051.002', name: 'LLM Prompt Injection: Triggered' },
      { id: 'AML.T0053', name: 'AI Agent Tool Invocation' },
      { id: 'AML.T0054', name: 'LLM Jailbreak' },
      { id: 'AML.T0055', name: 'Unsecured Credentials' },
      { id: 'AML.T0056', name: 'Extract LLM System Prompt' },
      { id: 'AML.T0057', name: 'LLM Data Leakage' },
      { id: 'AML.T0061', name: 'LLM Prompt Self-Replication' },
      { id: 'AML.T0064', name: 'Gather RAG-Indexed Targets' },
      { id: 'AML.T0066', name: 'Retrieval Content Crafting' },
      { id: 'AML.T0067', name: 'LLM Trusted Output Components Manipulation' },
      { id: 'AML.T0068', name: 'LLM Prompt Obfuscation' },
      { id: 'AML.T0069', name: 'Discover LLM System Information' },
      { id: 'AML.T0070', name: 'RAG Poisoning' },
      { id: 'AML.T0071', name: 'False RAG Entry Injection' },
      { id: 'AML.T0077', name: 'LLM Response Rendering' },
      { id: 'AML.T0080', name: 'AI Agent Context Poisoning' },
      { id: 'AML.T0080.000', name: 'AI Agent Context Poisoning: Memory' },
      { id: 'AML.T0081', name: 'Modify AI Agent Configuration' },
      { id: 'AML.T0082', name: 'RAG Credential Harvesting' },
      { id: 'AML.T0083', name: 'Credentials from AI Agent Configuration' },
      { id: 'AML.T0084', name: 'Discover AI Agent Configuration' },
      { id: 'AML.T0084.000', name: 'Discover AI Agent Configuration: Embedded Knowledge' },
      { id: 'AML.T0084.001', name: 'Discover AI Agent Configuration: Tool Definitions' },
      { id: 'AML.T0085', name: 'Data from AI Services' },
      { id: 'AML.T0085.000', name: 'Data from AI Services: RAG Databases' },
      { id: 'AML.T0085.001', name: 'Data from AI Services: AI Agent Tools' },
      { id: 'AML.T0086', name: 'Exfiltration via AI Agent Tool Invocation' },
      { id: 'AML.T0091', name: 'Use Alternate Authentication Material' },
      { id: 'AML.T0091.000', name: 'Use Alternate Authentication Material: Application Access Token' },
      { id: 'AML.T0093', name: 'Prompt Infiltration via Public-Facing Application' },
      { id: 'AML.T0098', name: 'AI Agent Tool Credential Harvesting' },
      { id: 'AML.T0099', name: 'AI Agent Tool Data Poisoning' },
      { id: 'AML.T0100', name: 'AI Agent Clickbait' },
      { id: 'AML.T0101', name: 'Data Destruction via AI Agent Tool Invocation' },
      { id: 'AML.T0103', name: 'Deploy AI Agent' },
      { id: 'AML.T0104', name: 'Publish Poisoned AI Agent Tool' },
      { id: 'AML.T0110', name: 'AI Agent Tool Poisoning' },
    ],
  },
  {
    id: 'mitre-attack',
    name: 'MITRE ATT&CK Enterprise',
    shortName: 'ATT&CK Enterprise',
    kind: 'framework',
    version: null,
    source: 'https://attack.mitre.org/techniques/enterprise/',
    items: [
      { id: 'T1059', name: 'Command and Scripting Interpreter' },
      { id: 'T1078', name: 'Valid Accounts' },
      { id: 'T1078.004', name: 'Valid Accounts: Cloud Accounts' },
      { id: 'T1070', name: 'Indicator Removal' },
      { id: 'T1087', name: 'Account Discovery' },
      { id: 'T1098', name: 'Account Manipulation' },
      { id: 'T1098.001', name: 'Account Manipulation: Additional Cloud Credentials' },
      { id: 'T1098.003', name: 'Account Manipulation: Additional Cloud Roles' },
      { id: 'T1105', name: 'Ingress Tool Transfer' },
      { id: 'T1114', name: 'Email Collection' },
      { id: 'T1114.003', name: 'Email Collection: Email Forwarding Rule' },
      { id: 'T1136', name: 'Create Account' },
      { id: 'T1136.003', name: 'Create Account: Cloud Account' },
      { id: 'T1190', name: 'Exploit Public-Facing Application' },
      { id: 'T1213', name: 'Data from Information Repositories' },
      { id: 'T1485', name: 'Data Destruction' },
      { id: 'T1489', name: 'Service Stop' },
      { id: 'T1528', name: 'Steal Application Access Token' },
      { id: 'T1530', name: 'Data from Cloud Storage' },
      { id: 'T1534', name: 'Internal Spearphishing' },
      { id: 'T1537', name: 'Transfer Data to Cloud Account' },
      { id: 'T1546', name: 'Event Triggered Execution' },
      { id: 'T1550', name: 'Use Alternate Authentication Material' },
      { id: 'T1550.001', name: 'Use Alternate Authentication Material: Application Access Token' },
      { id: 'T1550.004', name: 'Use Alternate Authentication Material: Web Session Cookie' },
      { id: 'T1552', name: 'Unsecured Credentials' },
      { id: 'T1539', name: 'Steal Web Session Cookie' },
      { id: 'T1556', name: 'Modify Authentication Process' },
      { id: 'T1562', name: 'Impair Defenses' },
      { id: 'T1562.001', name: 'Impair Defenses: Disable or Modify Tools' },
      { id: 'T1562.008', name: 'Impair Defenses: Disable or Modify Cloud Logs' },
      { id: 'T1566', name: 'Phishing' },
      { id: 'T1567', name: 'Exfiltration Over Web Service' },
      { id: 'T1648', name: 'Serverless Execution' },
    ],
  },
  {
    id: 'scubagear',
    name: 'CISA ScubaGear (Power BI and Power Platform baselines)',
    shortName: 'ScubaGear',
    kind: 'peer',
    prefix: 'ScubaGear',
    version: null,
    source: 'https://github.com/cisagov/ScubaGear/tree/4d34e9a48e38ce5c2e14c0fdfbaee53e57594ae2/PowerShell/ScubaGear/baselines',
    items: [
      { id: 'MS.POWERBI.1.1v1', name: 'The Publish to Web feature SHOULD be disabled unless the agency mission requires the capability.' },
      { id: 'MS.POWERBI.2.1v1', name: 'Guest user access to the Power BI tenant SHOULD be disabled unless the agency mission requires the capability.' },
      {
        id: 'MS.POWERBI.3.1v1',
        name: 'The Invite external users to your organization feature SHOULD be disabled unless agency mission requires the capability.',
      },
      {
        id: 'MS.POWERBI.4.1v1',
        name: 'Service principals with access to APIs SHOULD be restricted to specific security groups.',
      },
      {
        id: 'MS.POWERBI.4.2v1',
        name: 'Service principals creating and using profiles SHOULD be restricted to specific security groups.',
      },
      {
        id: 'MS.POWERBI.5.1v1',
        name: 'ResourceKey-based authentication SHOULD be blocked unless a specific use case (e.g., streaming and/or PUSH datasets) merits its use.',
      },
      { id: 'MS.POWERBI.6.1v1', name: 'Python and R interactions SHOULD be disabled.' },
      {
        id: 'MS.POWERBI.7.1v1',
        name: 'Sensitivity labels SHOULD be enabled for Power BI and employed for sensitive data per enterprise data protection policies.',
      },
      { id: 'MS.POWERPLATFORM.1.1v1', name: 'The ability to create production and sandbox environments SHALL be restricted to admins.' },
      { id: 'MS.POWERPLATFORM.1.2v1', name: 'The ability to create trial environments SHALL be restricted to admins.' },
      { id: 'MS.POWERPLATFORM.2.1v1', name: 'A DLP policy SHALL be created to restrict connector access in the default Power Platform environment.' },
      { id: 'MS.POWERPLATFORM.2.2v1', name: 'Non-default environments SHOULD have at least one DLP policy affecting them.' },
      // Dropped from the current baseline text (cisagov/ScubaGear commit 75280fa8, 2023-08) but still tested by
      // Rego/PowerPlatformConfig.rego at the commit above.
      {
        id: 'MS.POWERPLATFORM.2.3v1',
        name: 'All connectors except those listed below SHOULD be added to the Blocked category in the default environment policy.',
      },
      { id: 'MS.POWERPLATFORM.3.1v1', name: 'Power Platform tenant isolation SHALL be enabled.' },
      { id: 'MS.POWERPLATFORM.3.2v1', name: 'An inbound/outbound connection allowlist SHOULD be configured.' },
      { id: 'MS.POWERPLATFORM.4.1v1', name: 'Content Security Policy (CSP) SHALL be enforced for model-driven and canvas Power Apps.' },
      { id: 'MS.POWERPLATFORM.5.1v1', name: 'The ability to create Power Pages sites SHOULD be restricted to admins.' },
      { id: 'MS.POWERPLATFORM.6.1v1', name: 'The Share with Everyone feature SHOULD be disabled.' },
    ],
  },
  {
    id: 'maester',
    name: 'Maester AI agent tests (Copilot Studio)',
    shortName: 'Maester',
    kind: 'peer',
    prefix: 'Maester',
    version: null,
    source: 'https://github.com/maester365/maester/blob/6bf1d98f094fc7a68e449d2f40f73ef820b72ee3/tests/Maester/AIAgent/Test-AIAgentSecurity.Tests.ps1',
    items: [
      { id: 'MT.1113', name: 'AI agents should not be shared with broad access control policies.' },
      { id: 'MT.1114', name: 'AI agents should require user authentication.' },
      { id: 'MT.1115', name: 'AI agents should not have risky HTTP configurations.' },
      {
        id: 'MT.1116',
        name: 'AI agents should not send email with AI-controlled inputs.',
        notCovered: "not covered yet: no check reads an agent's email tools to see which of their inputs the AI fills",
      },
      { id: 'MT.1117', name: 'Published AI agents should not be dormant.' },
      { id: 'MT.1118', name: 'AI agents should not use author (maker) authentication for connections.' },
      { id: 'MT.1119', name: 'AI agents should not have hard-coded credentials in topics.' },
      { id: 'MT.1120', name: 'AI agents should not use MCP server tools without review.' },
      { id: 'MT.1121', name: 'AI agents with generative orchestration should have custom instructions.' },
      { id: 'MT.1122', name: 'AI agents should not have orphaned ownership.' },
    ],
  },
  {
    id: 'sentinel',
    name: 'Microsoft Sentinel (Microsoft Business Applications: Power Apps, Power Automate, Power Platform; Microsoft Copilot)',
    shortName: 'Sentinel',
    kind: 'peer',
    prefix: 'Sentinel',
    version: null,
    source: 'https://github.com/Azure/Azure-Sentinel/tree/master/Solutions (Microsoft Business Applications/Analytic Rules, Microsoft Copilot/Analytic Rules)',
    items: [
      {
        id: '7ec1e61d-f3b7-4f40-bb1a-357a63913c23',
        name: 'Power Apps - App activity from unauthorized geo',
        notCovered: 'not covered, because it needs an IP geolocation database and a list of disallowed countries, which Vigil does not have',
      },
      {
        id: '943acfa0-9285-4eb0-a9c0-42e36177ef19',
        name: 'Power Apps - Bulk sharing of Power Apps to newly created guest users',
        notCovered: 'not covered yet: no rule joins Power Apps sharing events with recent guest invitations',
      },
      {
        id: 'ed88638d-8627-4c20-ba08-67c13807a9b1',
        name: 'Power Apps - Multiple apps deleted',
        notCovered: 'not covered yet: no rule counts Power Apps deletions',
      },
      {
        id: '4bd7e93a-0646-4e02-8dcb-aa16d16618f4',
        name: 'Power Apps - Multiple users access a malicious link after launching new app',
        notCovered: 'not covered, because it needs Defender URL-click events and threat-intelligence indicators, which Vigil does not collect',
      },
      {
        id: 'b1e11b8c-545a-4dea-a912-0008e160d183',
        name: 'Power Automate - Departing employee flow activity',
        notCovered: "not covered, because it needs the organization's watchlist of departing and terminated employees (HR data), which Vigil does not have",
      },
      {
        id: '56cb646e-56a0-4f0e-8866-9bc1dd15da78',
        name: 'Power Automate - Unusual bulk deletion of flow resources',
        notCovered: 'not covered yet: no rule counts flow deletions',
      },
      {
        id: '71d829d6-eb50-4a17-8a64-655fae8d71e1',
        name: 'Power Platform - Account added to privileged Microsoft Entra roles',
        notCovered: 'not covered yet: no rule reads Entra role assignments of the Power Platform, Dynamics 365 and Fabric administrator roles',
      },
      {
        id: '886a5655-3d12-42f1-8927-4095789c575e',
        name: 'Power Platform - Connector added to a sensitive environment',
        notCovered: "not covered, because it needs the organization's list of sensitive environments, which Vigil does not have",
      },
      { id: '1b2e6172-85c5-417a-90c3-7cc80cb787f5', name: 'Power Platform - DLP policy updated or removed' },
      {
        id: '54d48840-1c64-4399-afee-ad39a069118d',
        name: 'Power Platform - Possibly compromised user accesses Power Platform services',
        notCovered: 'not covered, because it needs Microsoft Entra ID Protection risk events on sign-ins, which Vigil does not collect',
      },
      { id: 'f6a7b8c9-d0e1-42f3-a4b5-c6d7e8f9a0b1', name: 'Copilot - Access From External IP Address' },
      {
        id: 'c3d4e5f6-a7b8-49c0-d1e2-f3a4b5c6d7e8',
        name: 'Copilot - File Uploads Disabled',
        notCovered: 'not covered yet: no rule reads Copilot plugin setting changes (DisableCopilotPlugin)',
      },
      {
        id: 'e5f6a7b8-c9d0-41e2-f3a4-b5c6d7e8f9a0',
        name: 'Copilot - Jailbreak Attempt Detected',
        notCovered: "not covered yet: no rule reads the Copilot interaction record's JailbreakDetected flag",
      },
      {
        id: 'a1b2c3d4-e5f6-47a8-b9c0-d1e2f3a4b5c6',
        name: 'Copilot - Plugin Created by Non-Admin User',
        notCovered: 'not covered yet: no rule reads Copilot plugin creation (CreateCopilotPlugin)',
      },
      {
        id: 'b2c3d4e5-f6a7-48b9-c0d1-e2f3a4b5c6d7',
        name: 'Copilot - Plugin Enabled After Being Disabled',
        notCovered: 'not covered yet: no rule reads Copilot plugin setting changes (EnableCopilotPlugin)',
      },
      {
        id: 'd4e5f6a7-b8c9-40d1-e2f3-a4b5c6d7e8f9',
        name: 'Copilot - Plugin Tampering (Enable and Disable Within 5 Minutes)',
        notCovered: 'not covered yet: no rule reads Copilot plugin setting changes (EnableCopilotPlugin, DisableCopilotPlugin)',
      },
    ],
  },
];

/** A reference from metadata to a catalogue item, with the text that followed it (the mapping's note). */
export interface ItemRef {
  framework: FrameworkId;
  itemId: string;
  /** What the reference says besides the item: for a peer, e.g. `(exceeds: every environment)`; for a framework, the name it gave. */
  note: string | null;
}

/** ScubaGear policy ids compare without their version suffix (`MS.POWERBI.1.1` = `MS.POWERBI.1.1v1`). */
const unversioned = (id: string) => id.replace(/v\d+$/, '');

/**
 * The catalogue item a framework mapping names: `frameworks[key]` entries are `"<id>: <name>"` (`"LLM06: Excessive
 * Agency"`, `"AML.T0051.001: LLM Prompt Injection: Indirect"`).
 * @returns null for a key that is not a framework of the catalogue.
 */
export function frameworkRef(key: string, entry: string): ItemRef | null {
  const fw = FRAMEWORKS.find((f) => f.id === key && f.kind === 'framework');
  if (!fw) return null;
  const at = entry.indexOf(':');
  const id = (at < 0 ? entry : entry.slice(0, at)).trim();
  return { framework: fw.id, itemId: id, note: at < 0 ? null : entry.slice(at + 1).trim() };
}

/**
 * The catalogue items a `peers` string names, by the id or quoted name at its start: `ScubaGear MS.POWERBI.1.1 (…)`,
 * `Maester MT.1114 (…)`, `Maester MT.1114 + MT.1113: …` (several), `Sentinel "Power Platform - DLP policy updated or
 * removed" (…)`. The ids are returned as the catalogue writes them; an id the catalogue lacks is returned as written.
 * @returns [] for a string that starts with no peer's prefix.
 */
export function peerRefs(peer: string): ItemRef[] {
  const fw = FRAMEWORKS.find((f) => f.kind === 'peer' && peer.startsWith(`${f.prefix} `));
  if (!fw) return [];
  const rest = peer.slice(fw.prefix!.length + 1).trim();
  const quoted = /^"([^"]+)"\s*(.*)$/s.exec(rest);
  if (quoted) {
    const item = fw.items.find((i) => i.name === quoted[1]);
    return [{ framework: fw.id, itemId: item?.id ?? quoted[1]!, note: quoted[2]!.trim() || null }];
  }
  const ids = /^([A-Za-z0-9.]+(?:\s*\+\s*[A-Za-z0-9.]+)*)\s*(.*)$/s.exec(rest);
  if (!ids) return [];
  const note = ids[2]!.replace(/^:\s*/, '').trim() || null;
  return ids[1]!.split('+').map((raw) => {
    const id = raw.trim();
    const item = fw.items.find((i) => unversioned(i.id) === unversioned(id));
    return { framework: fw.id, itemId: item?.id ?? id, note };
  });
}
