import { z } from 'zod';
import { SEVERITIES } from '../core/types.ts';
import { FINDING_EXPORT_FORMATS } from '../exports/findings.ts';

/** Contract of `/api/v1/exports/findings`. */

/** Format and filters of a findings export. */
export const FindingExportQuery = z.object({
  format: z.enum(FINDING_EXPORT_FORMATS).describe('json, csv (RFC 4180), sarif (SARIF 2.1.0), ocsf (OCSF 1.9.0 Detection Finding array), ocsf-ndjson'),
  integrationId: z.string().max(200).optional(),
  status: z.enum(['open', 'resolved', 'suppressed', 'all']).default('all'),
  severity: z.enum(SEVERITIES).optional(),
  checkId: z.string().max(200).optional(),
  resourceId: z.string().max(400).optional(),
});

/** The exported file (its media type per format: application/json, text/csv, application/sarif+json, application/x-ndjson). */
export const FindingExportFile = z.string().describe('The file');
