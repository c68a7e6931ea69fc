import { VigilError } from '../../core/errors.ts';
import type { StreamContext } from '../stream.ts';
import { DATAVERSE_API, dataverseResource } from './entity.ts';
import type { Json } from '../../core/json.ts';

/**
 * The Dataverse Web API sequence that makes an application a System Administrator when BAP's `addAppUser` is
 * refused: root business unit → find or create the `systemuser` with the `applicationid` → find the role
 * "System Administrator" of the root business unit → associate it. The caller must already be privileged in the
 * environment (an administrator's token).
 * Source: terraform-provider-power-platform `internal/services/authorization/api_user.go`; Dataverse Web API
 * "Associate and disassociate table rows" (`webapi/associate-disassociate-entities-using-web-api.md`).
 */

/** The System Administrator security role's name. */
const SYSTEM_ADMINISTRATOR = 'System Administrator';

/**
 * Runs the sequence in one environment. Returns whether the role was newly associated (false = it already was).
 * @throws UpstreamHttpError when Dataverse refuses a step; VigilError `ROLE_NOT_FOUND` when the role is missing.
 */
export async function assignSystemAdministrator(
  ctx: StreamContext,
  instanceUrl: string,
  appId: string,
  token: (forceRefresh: boolean) => Promise<string>,
): Promise<boolean> {
  const base = `${dataverseResource(instanceUrl)}/${DATAVERSE_API}`;
  const headers = { 'OData-MaxVersion': '4.0', 'OData-Version': '4.0' };
  const get = async (path: string) =>
    (await ctx.http.send<{ value?: Json[] }>({ api: 'dataverse', url: `${base}/${path}`, headers, token, tenantId: ctx.tenantId })).body?.value ?? [];

  const [root] = await get(`businessunits?$select=businessunitid,name&$filter=parentbusinessunitid eq null`);
  if (!root) throw new VigilError('ROOT_BUSINESS_UNIT_NOT_FOUND', 'Dataverse returned no root business unit.');
  const rootId = String(root.businessunitid);

  let [user] = await get(
    `systemusers?$select=systemuserid,applicationid&$expand=systemuserroles_association($select=roleid,name)&$filter=applicationid eq ${appId}`,
  );
  if (!user) {
    const created = await ctx.http.send({
      api: 'dataverse',
      method: 'POST',
      url: `${base}/systemusers`,
      headers,
      body: { applicationid: appId, accessmode: 4, isdisabled: false, 'businessunitid@odata.bind': `/businessunits(${rootId})` },
      token,
      tenantId: ctx.tenantId,
    });
    const id = /systemusers\(([0-9a-f-]{36})\)/i.exec(created.headers['odata-entityid'] ?? '')?.[1];
    if (!id) throw new VigilError('APPLICATION_USER_NOT_CREATED', 'Dataverse did not return the new application user.');
    user = { systemuserid: id, systemuserroles_association: [] };
  }
  const userId = String(user.systemuserid);
  const held = Array.isArray(user.systemuserroles_association) ? (user.systemuserroles_association as Json[]) : [];
  if (held.some((r) => r.name === SYSTEM_ADMINISTRATOR)) return false;

  const roles = await get(`roles?$select=roleid,name,_businessunitid_value&$filter=_businessunitid_value eq ${rootId}`);
  const role = roles.find((r) => r.name === SYSTEM_ADMINISTRATOR);
  if (!role) throw new VigilError('ROLE_NOT_FOUND', `The environment has no "${SYSTEM_ADMINISTRATOR}" role in its root business unit.`);
  await ctx.http.send({
    api: 'dataverse',
    method: 'POST',
    url: `${base}/systemusers(${userId})/systemuserroles_association/$ref`,
    headers,
    body: { '@odata.id': `${base}/roles(${String(role.roleid)})` },
    token,
    tenantId: ctx.tenantId,
  });
  return true;
}
