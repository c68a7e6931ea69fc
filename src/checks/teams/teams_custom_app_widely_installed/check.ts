import { evaluateGrouped } from '../../helpers.ts';
import type { TeamsAppAttrs } from '../../../sources/graph/streams/teamsApps.ts';
import type { CheckFunction } from '../../types.ts';

/** Users from which a custom app's reach is reported: installed for this many users or more, it fails. */
export const WIDE_INSTALL_USERS = 20;

/**
 * Groups personal-scope installations by Teams app and fails each custom app — uploaded directly (`sideloaded`) or
 * published to the organisation's catalogue (`organization`) — installed for {@link WIDE_INSTALL_USERS} users or
 * more; one tenant pass when none is. Store apps are reviewed by Microsoft and left out.
 * Source: Graph `userteamwork-list-installedapps`, `teamsapp` (`distributionMethod`).
 */
export const check: CheckFunction = (ctx) =>
  evaluateGrouped(
    ctx,
    'teamsApps',
    'teamsApp',
    (i) => (i.attrs.distributionMethod === 'sideloaded' || i.attrs.distributionMethod === 'organization' ? (i.attrs.teamsAppId ?? i.attrs.externalId) : null),
    (app: { first: TeamsAppAttrs; users: Set<string> } | undefined, i) => {
      const state = app ?? { first: i.attrs, users: new Set<string>() };
      state.users.add(i.attrs.userId);
      return state;
    },
    (appId, { first, users: installedFor }) => {
      const users = installedFor.size;
      if (users < WIDE_INSTALL_USERS) return null;
      return {
        status: 'fail',
        name: first.displayName,
        reason: `Custom app "${first.displayName ?? appId}" (${first.distributionMethod}${first.azureADAppId ? `, Entra app ${first.azureADAppId}` : ''}) is installed for ${users} users.`,
        detail: { users, distributionMethod: first.distributionMethod, azureADAppId: first.azureADAppId },
      };
    },
    { passReason: `No custom Teams app is installed for ${WIDE_INSTALL_USERS} users or more.` },
  );
