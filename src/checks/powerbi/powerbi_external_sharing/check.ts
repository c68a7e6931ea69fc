import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails shared (non-personal) workspaces where guests hold a workspace role, or any report or dataset is shared
 * directly with guests (`userType` not `Member` in the scan result, read with `getArtifactUsers=true`).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'powerBiWorkspaces', 'powerBiWorkspace', (w) => {
    if (w.attrs.type === 'PersonalGroup' || w.attrs.state === 'Deleted') return null;
    const artifacts = [...w.attrs.reports, ...w.attrs.datasets].filter((a) => a.externalUserCount > 0);
    if (w.attrs.externalUserCount === 0 && artifacts.length === 0) return { status: 'pass', reason: null };
    const parts = [];
    if (w.attrs.externalUserCount > 0) parts.push(`${w.attrs.externalUserCount} guest(s) hold a workspace role`);
    if (artifacts.length > 0)
      parts.push(
        `${artifacts.length} report(s)/dataset(s) shared with guests (${artifacts
          .slice(0, 3)
          .map((a) => a.name ?? a.id)
          .join(', ')})`,
      );
    return { status: 'fail', reason: `${parts.join('; ')}.`, detail: { artifacts: artifacts.map((a) => a.id) } };
  });
