import type { DataverseUser } from '../../../core/inventory.ts';
import { str } from '../../../core/json.ts';
import { dataverseEntityStream } from '../entity.ts';

/** Dataverse users (people and application users) of every environment with Dataverse. */
export const dataverseUsersStream = dataverseEntityStream({
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
