import type { CheckFunction } from '../../types.ts';
import { evaluateEnvironmentsDlp } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.2.2: every non-default environment has at least one DLP policy applying to it. One
 * result per non-default environment (the default one is pp_dlp_default_environment): passes when a policy's scope
 * covers it — `AllEnvironments`, `ExceptEnvironments` NOT listing it, `OnlyEnvironments` listing it — and fails when
 * none does, notably when its only policies exclude it (ScubaGear issue #1396 reported the opposite false results);
 * not evaluated for the tenant when the environments or DLP policies were not collected.
 * Source: Microsoft Learn "Data policies" (power-platform/admin/wp-data-loss-prevention).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentsDlp(
    ctx,
    (isDefault) => !isDefault,
    (covering) =>
      covering.length > 0
        ? { status: 'pass', reason: `Covered by ${covering.map((p) => p.name ?? p.id).join(', ')}.` }
        : { status: 'fail', reason: 'No DLP policy applies to this environment.' },
  );
