import { VigilError } from '../core/errors.ts';

/**
 * Deployment regions of the hosted service and the source IP addresses customers safelist when their policy
 * requires it. Source: the integration spec (seed), "Limits": Default region 18.200.62.37, 52.31.196.233,
 * 108.128.206.229, 99.81.56.225; US (Ohio) 18.116.189.61, 3.147.9.237. The service API and portal URLs of a
 * region are deployment settings (VIGIL_API_URL, VIGIL_PORTAL_URL).
 */

/** A region. */
export interface Region {
  id: 'default' | 'us';
  name: string;
  /** Source addresses of the service's outbound calls (IPv4). */
  egressIps: readonly string[];
}

/** The regions of the seed. */
export const REGIONS: Readonly<Record<Region['id'], Region>> = Object.freeze({
  default: { id: 'default', name: 'Default', egressIps: ['18.200.62.37', '52.31.196.233', '108.128.206.229', '99.81.56.225'] },
  us: { id: 'us', name: 'US (Ohio)', egressIps: ['18.116.189.61', '3.147.9.237'] },
});

/**
 * The region named `id`.
 * @throws VigilError `invalid-input` naming the field and the valid names.
 */
export function regionById(id: string, field = 'region'): Region {
  const r = REGIONS[id as Region['id']];
  if (!r)
    throw new VigilError('UNKNOWN_REGION', `Unknown region '${id}'.`, {
      field,
      remediation: `Use one of: ${Object.keys(REGIONS).join(', ')}.`,
    });
  return r;
}
