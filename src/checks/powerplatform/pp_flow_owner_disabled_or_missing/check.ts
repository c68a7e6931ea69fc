import { evaluateEstate, ownerVerdict } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per cloud flow: follows the creator's Microsoft Entra object id (`properties.creator.objectId`) to the directory
 * users. Fails when the creator no longer exists in the directory or is disabled; passes an active creator and a
 * creator whose `userType` says it is a service principal/application. Not evaluated for a flow whose creator carries
 * no object id, for unreadable environments, and for the tenant when the `flows` or `users` stream did not run.
 * Source: Microsoft Learn "Manage orphaned resources" (power-platform/admin/manage-orphaned-resources).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(
    ctx,
    'flows',
    'flow',
    (flow) =>
      /service ?principal|application/i.test(flow.attrs.creator.userType ?? '')
        ? { status: 'pass', reason: 'Created by a service principal.' }
        : ownerVerdict(ctx, flow.attrs.creator.objectId, 'creator'),
    { requires: ['users'] },
  );
