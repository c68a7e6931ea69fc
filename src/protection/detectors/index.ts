import type { ProtectionDetector } from '../types.ts';
import { detector as changedAgent } from './changed_agent.ts';
import { detector as externalRecipient } from './external_recipient.ts';
import { detector as jailbreak } from './jailbreak.ts';
import { detector as promptInjection } from './prompt_injection.ts';
import { detector as sensitiveDataEgress } from './sensitive_data_egress.ts';
import { detector as unapprovedTool } from './unapproved_tool.ts';

/**
 * The protection detectors, in the order the engine runs them: the cheap inventory and allow-list checks first (so a
 * deadline that runs out still leaves their verdicts), then the text scans, the costliest last.
 */
export const PROTECTION_DETECTORS: readonly ProtectionDetector[] = [
  unapprovedTool,
  changedAgent,
  externalRecipient,
  sensitiveDataEgress,
  promptInjection,
  jailbreak,
];
