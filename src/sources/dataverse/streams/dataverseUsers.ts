import { str } from '../../../core/json.ts';
import { dataverseEntityStream } from '../entity.ts';
import type { Stream } from '../../stream.ts';
import type { Collected } from '../../../core/inventory.ts';

/** A Dataverse `systemuser` of one environment (people and application users). */
export interface DataverseUser extends Collected {
  environmentId: string;
  id: string;
  fullName: string | null;
  /** Microsoft Entra object id of the person (`azureactivedirectoryobjectid`). */
  aadObjectId: string | null;
  /** Set for application users (`applicationid`). */
  applicationId: string | null;
  isDisabled: boolean | null;
}

/** Dataverse users (people and application users) of every environment with Dataverse. */
export const dataverseUsersStream: Stream<'dataverseUsers', DataverseUser> = dataverseEntityStream({
  name: 'dataverseUsers',
  primaryKey: ['environmentId', 'id'],
  entitySet: 'systemusers',
  select: 'systemuserid,fullname,domainname,azureactivedirectoryobjectid,applicationid,isdisabled,accessmode',
  map: (j, slice): DataverseUser => ({
    environmentId: slice.key,
    id: String(j.systemuserid),
    fullName: str(j.fullname),
    aadObjectId: str(j.azureactivedirectoryobjectid),
    applicationId: str(j.applicationid),
    isDisabled: typeof j.isdisabled === 'boolean' ? j.isdisabled : null,
    raw: j,
  }),
});
