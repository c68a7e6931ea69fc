import { RECORD_TYPES } from '../../core/audit.ts';
import type { Detection } from '../types.ts';

/** A Power BI report was published to the web (public, anonymous link). */
export const detection: Detection = {
  metadata: {
    id: 'powerbi_publish_to_web',
    title: 'Power BI report published to the web',
    severity: 'high',
    description: 'A report was published to the web ("PublishToWebReport"): anyone with the link, or a search engine, can see its data without signing in.',
    response:
      'Review the report\'s data; delete the embed code (Settings > Manage embed codes) if it is not meant to be public; restrict "Publish to web" in the tenant settings to a security group.',
    references: ['https://learn.microsoft.com/power-bi/collaborate-share/service-publish-to-web', 'https://learn.microsoft.com/fabric/admin/operation-list'],
    frameworks: { 'mitre-attack': ['T1567: Exfiltration Over Web Service'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerBIAudit],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) =>
      /^PublishToWebReport$/i.test(e.operation ?? '')
        ? [
            {
              dedupeKey: e.id,
              title: `Power BI report ${(e.raw.ReportName as string | undefined) ?? e.objectId ?? ''} published to the web by ${e.userId}`,
              eventIds: [e.id],
              detail: { user: e.userId, report: e.raw.ReportName ?? e.objectId, reportId: e.raw.ReportId ?? null, workspace: e.raw.WorkSpaceName ?? null },
            },
          ]
        : [],
    ),
};
