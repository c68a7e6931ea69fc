import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `EimInformationProtectionEdit` is disabled. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'EimInformationProtectionEdit',
    'on',
    'Power BI content carries no Microsoft Purview sensitivity labels, so label-based protection (encryption on export, DLP, restricted sharing) never applies.',
  );
