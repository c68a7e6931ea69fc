import type { MatchType } from '../types.ts';

/**
 * Normalised attributes of one Microsoft 365 Copilot interaction (Graph `aiInteraction`, from
 * `GET /copilot/users/{id}/interactionHistory/getAllEnterpriseInteractions`; resource page `resources/aiinteraction.md`).
 * The body text itself is not kept here; the stored `raw` holds it with every secret and personal-data finding masked.
 */
export interface CopilotInteractionAttrs {
  /** Entra object id of the licensed user whose history this is (the slice). */
  userId: string;
  /** Conversation thread id (`19:…@thread.v2`). */
  sessionId: string | null;
  /** Pairs a prompt with its response. */
  requestId: string | null;
  /** Copilot surface, e.g. `IPM.SkypeTeams.Message.Copilot.Teams` (Word, Excel, Teams, BizChat, WebChat). */
  appClass: string | null;
  /** `userPrompt`, `aiResponse` (or `unknownFutureValue`). */
  interactionType: string | null;
  /** `appchat`, `bizchat`, … */
  conversationType: string | null;
  /** ISO 8601 UTC. */
  createdDateTime: string | null;
  /** Who wrote it: the user (`type: 'user'`, Entra object id) or Copilot (`type: 'application'`, its app id). */
  from: { type: 'user' | 'application' | null; id: string | null };
  /** Number of `contexts` (files, meetings, pages Copilot was grounded on). */
  contexts: number;
  /** Number of `attachments`. */
  attachments: number;
  /** Number of `links`. */
  links: number;
  /** Length of `body.content` in characters (UTF-16 code units), before masking. */
  bodyLength: number;
  /** Content inspection of the body and attachment contents (`src/inspection`). */
  inspection: {
    /** Secret findings (keys, tokens, private keys, passwords). */
    secrets: number;
    /** Personal-data findings (card numbers, national identifiers, IBANs, e-mail addresses in bulk). */
    personal: number;
    /** Distinct finding types, sorted. */
    types: MatchType[];
    /** Up to 5 redacted excerpts (never a whole finding). */
    excerpts: string[];
  };
}
