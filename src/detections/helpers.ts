import type { AuditEvent } from '../core/audit.ts';

/** Helpers shared by detections: field access on raw records without trusting their shape. */

/** True when the user is a guest: UserType 10, or an Entra guest UPN (`…#EXT#@…`). */
export function isGuest(e: AuditEvent): boolean {
  return e.userType === 10 || /#EXT#/i.test(e.userId ?? '');
}

/** `ModifiedProperties` / `ExtendedProperties` of an Entra record as name → new value (lower-cased names). */
export function properties(e: AuditEvent): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of ['ModifiedProperties', 'ExtendedProperties']) {
    const list = e.raw[key];
    if (!Array.isArray(list)) continue;
    for (const p of list as Record<string, unknown>[]) {
      const name = typeof p.Name === 'string' ? p.Name : null;
      const value = typeof p.NewValue === 'string' ? p.NewValue : typeof p.Value === 'string' ? p.Value : null;
      if (name && value !== null) out.set(name.toLowerCase(), value);
    }
  }
  return out;
}

/** Every string value in a record (depth-first), for rules that look for URLs or flags anywhere. */
export function strings(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 8) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out, depth + 1);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out, depth + 1);
  return out;
}

/** A case-insensitive test of the operation name. */
export function operationIs(e: AuditEvent, pattern: RegExp): boolean {
  return pattern.test(e.operation ?? '');
}
