import { z } from 'zod';
import { FINDING_EXPORT_FORMATS } from '../exports/findings.ts';
import { FindingsFilterQuery } from './findings.ts';

/** Contract of `/api/v1/exports/findings`. */

/** Format and filters of a findings export: the findings list's filters and order (all statuses unless asked), every page. */
export const FindingExportQuery = FindingsFilterQuery.extend({
  format: z.enum(FINDING_EXPORT_FORMATS).describe('json, csv (RFC 4180), sarif (SARIF 2.1.0), ocsf (OCSF 1.9.0 Detection Finding array), ocsf-ndjson'),
  status: z.enum(['open', 'resolved', 'suppressed', 'all']).default('all'),
});

/** The exported file (its media type per format: application/json, text/csv, application/sarif+json, application/x-ndjson). */
export const FindingExportFile = z.string().describe('The file');
