import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Executable and script extensions that Dataverse's own default blocked list contains and that must stay blocked:
 * a file with one of them, uploaded as a note or email attachment, runs code when a user opens it. Source: Microsoft
 * Learn "System Settings dialog box - General tab" (power-platform/admin/system-settings-dialog-box-general-tab,
 * "Set blocked file extensions for attachments"; the default list includes these).
 */
const REQUIRED_BLOCKED_EXTENSIONS: readonly string[] = [
  'bat',
  'cmd',
  'com',
  'cpl',
  'dll',
  'exe',
  'hta',
  'jar',
  'js',
  'jse',
  'lnk',
  'msi',
  'pif',
  'reg',
  'scr',
  'vbe',
  'vbs',
  'wsf',
  'wsh',
];

/**
 * Fails environments with Dataverse whose blocked attachment list (`organization.blockedattachments`, semicolon
 * separated, compared case-insensitively with or without a leading dot) misses one of
 * {@link REQUIRED_BLOCKED_EXTENSIONS}; an empty list blocks nothing. Not evaluated per
 * {@link evaluateEnvironmentSettings}.
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['blockedAttachments'], (s) => {
    const blocked = new Set(
      (s.blockedAttachments ?? '')
        .split(/[;,]/)
        .map((e) => e.trim().replace(/^\./, '').toLowerCase())
        .filter((e) => e.length > 0),
    );
    const missing = REQUIRED_BLOCKED_EXTENSIONS.filter((e) => !blocked.has(e));
    const detail = { blockedCount: blocked.size, missing };
    if (blocked.size === 0)
      return { status: 'fail', reason: 'No attachment extension is blocked: executables and scripts can be stored as attachments.', detail };
    return missing.length === 0
      ? { status: 'pass', reason: `${blocked.size} extensions are blocked, executables and scripts included.`, detail }
      : { status: 'fail', reason: `Executable or script extensions are not blocked: ${missing.map((e) => `.${e}`).join(', ')}.`, detail };
  });
