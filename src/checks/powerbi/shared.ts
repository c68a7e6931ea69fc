import type { PowerBiTenantSettingAttrs } from '../../sources/powerBi/streams/powerBiTenantSettings.ts';
import { evaluateTenant, type Verdict } from '../helpers.ts';
import type { CheckContext, CheckResult } from '../types.ts';

/**
 * Helpers of the Power BI tenant-setting checks (`checks/powerbi/*`): one tenant-wide verdict on one Fabric tenant
 * setting (stream `powerBiTenantSettings`, id = `settingName`). Not a check (the loader only loads folders).
 */

/**
 * What a setting must be: `off`; `on`; or `offOrScoped` — off, or on only for named security groups
 * (`enabledSecurityGroups` non-empty), as ScubaGear's `Rego/PowerBIConfig.rego` judges MS.POWERBI.2.1–4.2.
 */
type Wanted = 'off' | 'on' | 'offOrScoped';

const groupNames = (s: PowerBiTenantSettingAttrs) => s.enabledSecurityGroups.map((g) => g.name ?? g.graphId).join(', ');

/**
 * The verdict on one Fabric tenant setting. Not evaluated — never a pass — when the stream did not run (a refused or
 * absent API: the gap's reason), when the tenant returned no such setting, or when it carried no `enabled` value.
 *
 * @param settingName the API's `settingName` (e.g. `PublishToWeb`).
 * @param failWhy what the failing state lets happen (appended to the reason).
 */
export function evaluateTenantSetting(ctx: CheckContext, settingName: string, wanted: Wanted, failWhy: string): CheckResult[] {
  return evaluateTenant(ctx, ['powerBiTenantSettings'], (): Verdict => {
    const row = ctx.inventory.estate('powerBiTenantSettings').find((r) => r.id.toLowerCase() === settingName.toLowerCase());
    if (!row) return { status: 'not_evaluated', reason: `The Fabric tenant settings did not include '${settingName}'.`, detail: { settingName } };
    const s = row.attrs;
    const title = `'${s.title ?? settingName}'`;
    const detail = { settingName, enabled: s.enabled, enabledSecurityGroups: s.enabledSecurityGroups.map((g) => g.graphId) };
    if (s.enabled === null) return { status: 'not_evaluated', reason: `The tenant setting ${title} carried no enabled value.`, detail };
    const scoped = s.enabledSecurityGroups.length > 0;
    switch (wanted) {
      case 'on':
        return s.enabled ? { status: 'pass', reason: `${title} is enabled.`, detail } : { status: 'fail', reason: `${title} is disabled: ${failWhy}`, detail };
      case 'off':
        return !s.enabled
          ? { status: 'pass', reason: `${title} is disabled.`, detail }
          : {
              status: 'fail',
              reason: `${title} is enabled ${scoped ? `for ${groupNames(s)}` : 'for the entire organisation'}: ${failWhy}`,
              detail,
            };
      case 'offOrScoped':
        if (!s.enabled) return { status: 'pass', reason: `${title} is disabled.`, detail };
        if (scoped) return { status: 'pass', reason: `${title} is enabled only for ${groupNames(s)}.`, detail };
        return { status: 'fail', reason: `${title} is enabled for the entire organisation: ${failWhy}`, detail };
    }
  });
}
