import type { StreamName } from '../core/inventory.ts';
import { environmentsStream } from './bap/streams.ts';
import { agentsStream, dataverseUsersStream } from './dataverse/streams.ts';
import { groupsStream, membershipsStream, usersStream } from './graph/streams.ts';
import type { Stream } from './stream.ts';

/** Every collection stream, in run order: parents before their children. */
export const STREAMS: { [S in StreamName]: Stream<S> } = {
  users: usersStream,
  groups: groupsStream,
  memberships: membershipsStream,
  environments: environmentsStream,
  dataverseUsers: dataverseUsersStream,
  agents: agentsStream,
};
