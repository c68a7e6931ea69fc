import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Connectors whose tools send e-mail: Office 365 Outlook (`shared_office365`), Outlook.com (`shared_outlook`), Mail
 * (`shared_sendmail`), Gmail (`shared_gmail`), SMTP (`shared_smtp`), Office 365 Groups Mail (`shared_office365groupsmail`).
 * Source: Microsoft Learn connector reference (learn.microsoft.com/connectors/{office365,outlook,sendmail,gmail,smtp}).
 */
const MAIL_CONNECTORS = new Set(['shared_office365', 'shared_outlook', 'shared_sendmail', 'shared_gmail', 'shared_smtp', 'shared_office365groupsmail']);

/**
 * Operations that send, forward or reply to mail (Office 365 Outlook `SendEmailV2`, `SendEmail`, `ForwardEmail_V2`,
 * `ReplyToV3`, `SendMailWithOptions`, Graph `sendMail`), matched in any connector or MCP tool; Maester MT.1116 matches
 * 'SendMail', 'Send an email', 'Send_an_email', 'Mail.Send' and 'microsoft.graph.sendMail' in the tool definitions.
 */
const SEND_OPERATION = /send_?(an_?)?e?mail|sendmailwithoptions|forwardemail|replyto|mail\.send/i;

/**
 * Fails agents with a connector or MCP tool that sends e-mail (a mail connector's send/forward/reply operation, or a
 * send-mail operation of any connector). A tool's inputs — recipient, subject, body — are filled by the model unless
 * the maker fixed them, so a prompt can steer where the agent mails its data. Tools of mail connectors that only read
 * (e.g. `GetEmailsV3`) pass.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components) => {
    const senders = components.filter((c) => {
      const t = c.attrs.tool;
      if (!t || (c.attrs.kind !== 'action' && c.attrs.kind !== 'mcp')) return false;
      const op = t.operationId ?? '';
      return SEND_OPERATION.test(op) && (t.connectorId === null || MAIL_CONNECTORS.has(t.connectorId.toLowerCase()) || /mail/i.test(op));
    });
    if (senders.length === 0) return { status: 'pass', reason: null };
    const ops = [...new Set(senders.map((c) => `${c.attrs.tool?.connectorId ?? 'connector'}/${c.attrs.tool?.operationId ?? ''}`))];
    return {
      status: 'fail',
      reason: `${senders.length} tool(s) send e-mail (${ops.join(', ')}): the model fills recipient, subject and body unless the maker fixed them, so a prompt can make the agent mail data out.`,
      detail: { components: senders.map((c) => c.id), operations: ops },
    };
  });
