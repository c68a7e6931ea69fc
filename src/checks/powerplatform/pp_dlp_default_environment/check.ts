import type { CheckFunction } from '../../types.ts';
import { evaluateEnvironmentsDlp } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.2.1: a DLP (data) policy applies to the default environment. One result per default
 * environment: passes when some policy's scope covers it — `AllEnvironments`, `ExceptEnvironments` NOT listing it,
 * or `OnlyEnvironments` listing it (ScubaGear issues #1396 and #1896 reported false results on exclude scopes);
 * fails when none does; not evaluated for the tenant when the environments or DLP policies were not collected.
 * Source: Microsoft Learn "Data policies" (power-platform/admin/wp-data-loss-prevention) and "Create a data policy"
 * (power-platform/admin/create-dlp-policy).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentsDlp(
    ctx,
    (isDefault) => isDefault,
    (covering) =>
      covering.length > 0
        ? { status: 'pass', reason: `Covered by ${covering.map((p) => p.name ?? p.id).join(', ')}.` }
        : { status: 'fail', reason: 'No DLP policy applies to the default environment: every user can combine any connectors in it.' },
    { defaultOnly: true },
  );
