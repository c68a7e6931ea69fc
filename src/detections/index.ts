import { VigilError } from '../core/errors.ts';
import { detection as adminConsent } from './rules/admin_consent_granted.ts';
import { detection as agentAuthNone } from './rules/agent_authentication_none.ts';
import { detection as copilotGuest } from './rules/copilot_guest_sensitive_access.ts';
import { detection as copilotNewIp } from './rules/copilot_new_ip.ts';
import { detection as customConnector } from './rules/custom_connector_created.ts';
import { detection as dlpWeakened } from './rules/dlp_policy_weakened.ts';
import { detection as flowHttp } from './rules/flow_external_http.ts';
import { detection as massCreation } from './rules/mass_agent_or_flow_creation.ts';
import { detection as publishToWeb } from './rules/powerbi_publish_to_web.ts';
import { detection as spCredentials } from './rules/service_principal_credentials_added.ts';
import { detection as agentCreated } from './rules/agent_created.ts';
import { detection as agentPublished } from './rules/agent_published.ts';
import { detection as agentDeleted } from './rules/agent_deleted.ts';
import { detection as agentAuthenticationWeakened } from './rules/agent_authentication_weakened.ts';
import { detection as agentAccessBroadened } from './rules/agent_access_broadened.ts';
import { detection as agentAppInsightsChanged } from './rules/agent_app_insights_changed.ts';
import { detection as agentKnowledgePublicWebsite } from './rules/agent_knowledge_public_website.ts';
import { detection as agentKnowledgeAdded } from './rules/agent_knowledge_added.ts';
import { detection as agentToolAdded } from './rules/agent_tool_added.ts';
import { detection as agentMcpServerAdded } from './rules/agent_mcp_server_added.ts';
import { detection as agentInstructionsChanged } from './rules/agent_instructions_changed.ts';
import { detection as agentPostureRuntimeIssue } from './rules/agent_posture_runtime_issue.ts';
import { detection as copilotJailbreak } from './rules/copilot_jailbreak_attempt.ts';
import { detection as copilotPluginNonAdmin } from './rules/copilot_plugin_created_by_non_admin.ts';
import { detection as copilotFileUploads } from './rules/copilot_file_uploads_disabled.ts';
import { detection as copilotPluginReenabled } from './rules/copilot_plugin_reenabled.ts';
import { detection as copilotPluginToggled } from './rules/copilot_plugin_toggled.ts';
import { detection as copilotVolume } from './rules/copilot_interaction_volume_spike.ts';
import { detection as ppAdminRole } from './rules/power_platform_admin_role_added.ts';
import { detection as prodConnection } from './rules/connection_in_production_environment.ts';
import { detection as appsSharedNewGuests } from './rules/powerapps_shared_with_new_guests.ts';
import { detection as appsBulkDeletion } from './rules/powerapps_bulk_deletion.ts';
import { detection as flowsBulkDeletion } from './rules/flow_bulk_deletion.ts';
import { detection as departingFlow } from './rules/flow_activity_by_departing_user.ts';
import { detectionMetadataSchema, type Detection } from './types.ts';

/**
 * The detection library. Each rule's metadata is validated when the library loads; a duplicate id or a metadata
 * error stops it (a broken rule must not be skipped silently).
 */
const ALL: Detection[] = [
  copilotGuest,
  agentAuthNone,
  dlpWeakened,
  customConnector,
  adminConsent,
  spCredentials,
  massCreation,
  flowHttp,
  publishToWeb,
  copilotNewIp,
  agentCreated,
  agentPublished,
  agentDeleted,
  agentAuthenticationWeakened,
  agentAccessBroadened,
  agentAppInsightsChanged,
  agentKnowledgePublicWebsite,
  agentKnowledgeAdded,
  agentToolAdded,
  agentMcpServerAdded,
  agentInstructionsChanged,
  agentPostureRuntimeIssue,
  // Peers of Sentinel's Microsoft Business Applications and Microsoft Copilot solutions (issue 20).
  copilotJailbreak,
  copilotPluginNonAdmin,
  copilotFileUploads,
  copilotPluginReenabled,
  copilotPluginToggled,
  copilotVolume,
  ppAdminRole,
  prodConnection,
  appsBulkDeletion,
  appsSharedNewGuests,
  flowsBulkDeletion,
  departingFlow,
];

/**
 * The validated detections.
 * @throws VigilError `internal` / `DETECTION_INVALID` naming the rule and field.
 */
export function loadDetections(): Detection[] {
  const ids = new Set<string>();
  for (const d of ALL) {
    const parsed = detectionMetadataSchema.safeParse(d.metadata);
    if (!parsed.success)
      throw new VigilError(
        'DETECTION_INVALID',
        `Detection ${d.metadata.id}: field '${parsed.error.issues[0]!.path.join('.')}' ${parsed.error.issues[0]!.message}`,
      );
    if (ids.has(d.metadata.id)) throw new VigilError('DETECTION_INVALID', `Detection id ${d.metadata.id} is used twice.`);
    ids.add(d.metadata.id);
  }
  return ALL;
}
