import type { CheckFunction } from '../../types.ts';
import { evaluateEnvironmentSettings } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.4.1: the content security policy is enforced for model-driven and canvas apps, per
 * environment with Dataverse (CSP applies only there). Reads the `environmentSettings` object of each such
 * environment (Dataverse `organization` columns `iscontentsecuritypolicyenabled` and
 * `iscontentsecuritypolicyenabledforcanvas`). Passes when both are true; fails when either is false (the reason names
 * which; reporting-only does not count as enforcement). Not evaluated: the tenant when the `environments` or
 * `environmentSettings` stream did not run; an environment whose Dataverse could not be read (errored slice), whose
 * settings object is missing, or whose columns came back null. Environments without Dataverse are left out.
 * Source: Microsoft Learn "Content security policy" (power-platform/admin/content-security-policy).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(
    ctx,
    ['cspEnforcedModelDriven', 'cspEnforcedCanvas'],
    (s) => {
      const missing = [s.cspEnforcedModelDriven ? null : 'model-driven', s.cspEnforcedCanvas ? null : 'canvas'].filter((x): x is string => x !== null);
      const detail = { modelDriven: s.cspEnforcedModelDriven, canvas: s.cspEnforcedCanvas, reporting: !!s.cspReportUri };
      return missing.length === 0
        ? { status: 'pass', reason: 'The content security policy is enforced for model-driven and canvas apps.', detail }
        : {
            status: 'fail',
            reason: `The content security policy is not enforced for ${missing.join(' and ')} apps${s.cspReportUri ? ' (violations are only reported)' : ''}.`,
            detail,
          };
    },
    "The environment's content security policy settings were not returned.",
  );
