import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails model deployments that name no content filter (`properties.raiPolicyName` absent). */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(
    ctx,
    'foundryDeployments',
    'foundryDeployment',
    (d) =>
      d.attrs.contentFilterMissing
        ? {
            status: 'fail',
            reason: `Deployment of ${d.attrs.modelName ?? 'a model'}${d.attrs.modelVersion ? ` ${d.attrs.modelVersion}` : ''} names no content filter (RAI policy).`,
          }
        : { status: 'pass', reason: `Content filter: ${d.attrs.raiPolicyName}.` },
    { requires: ['foundryAccounts'] },
  );
