/**
 * Normalised attributes of the `environmentSettings` stream: one object per environment with Dataverse (id and slice
 * = the environment name), read from the environment's single `organization` row. Today it carries the content
 * security policy (CSP) settings ScubaGear MS.POWERPLATFORM.4.1 asks for; `null` means the API did not return the
 * column.
 *
 * Sources: Dataverse `organization` entity columns `iscontentsecuritypolicyenabled`,
 * `iscontentsecuritypolicyenabledforcanvas`, `contentsecuritypolicyconfiguration`,
 * `contentsecuritypolicyconfigurationforcanvas`, `contentsecuritypolicyreporturi` (Dataverse Web API
 * `organization` EntityType; the Xrm typings name them "Indicates whether Content Security Policy has been enabled for
 * the organization" / "… for this organization's Canvas apps"); Microsoft Learn "Content security policy"
 * (power-platform/admin/content-security-policy): settings are per environment, apply only to environments with
 * Dataverse, enforcement and reporting are separate toggles for model-driven and canvas apps.
 */
export interface EnvironmentSettingsAttrs {
  /** The environment name (BAP `name`). */
  environmentId: string;
  /** `organizationid` of the environment's Dataverse organization. */
  organizationId: string | null;
  /** `iscontentsecuritypolicyenabled`: the CSP header is enforced for model-driven apps. */
  cspEnforcedModelDriven: boolean | null;
  /** `iscontentsecuritypolicyenabledforcanvas`: the CSP header is enforced for canvas apps. */
  cspEnforcedCanvas: boolean | null;
  /** `contentsecuritypolicyreporturi`: where browsers report CSP violations (null or empty: reporting off). */
  cspReportUri: string | null;
  /** `contentsecuritypolicyconfiguration`: the model-driven CSP configuration (JSON text as stored), or null. */
  cspConfigurationModelDriven: string | null;
  /** `contentsecuritypolicyconfigurationforcanvas`: the canvas CSP configuration (JSON text as stored), or null. */
  cspConfigurationCanvas: string | null;
}
