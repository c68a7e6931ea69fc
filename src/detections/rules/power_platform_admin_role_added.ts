import { RECORD_TYPES } from '../../core/audit.ts';
import { directoryChange } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * Entra built-in roles that administer Power Platform, by role template id (stable across tenants) and display name.
 * Source: learn.microsoft.com/entra/identity/role-based-access-control/permissions-reference (template ids); the
 * first three are the roles of Sentinel's rule, Global Administrator holds every Power Platform right too.
 */
const ROLES: Record<string, string> = {
  '11648597-926c-4cf3-9c36-bcebb0ba8dcc': 'Power Platform Administrator',
  '44367163-eba1-44c3-98af-f5787879f96a': 'Dynamics 365 Administrator',
  'a9ea8996-122f-4c74-9520-8edcd192826c': 'Fabric Administrator',
  '62e90394-69f5-4237-9190-012177145e10': 'Global Administrator',
};
const NAMES = new Set(Object.values(ROLES).map((n) => n.toLowerCase()));

/**
 * An account was added to an Entra role that administers Power Platform: "Add member to role." (or "Add eligible
 * member to role." of PIM), RecordType 8, whose `ModifiedProperties` `Role.TemplateId` (or `Role.DisplayName`) is one
 * of {@link ROLES}. Record shape: the Management Activity Azure AD schema; a recorded "Add member to role." (Global
 * Reader) in test/fixtures/real/audit/elastic-beats-azuread-users.ndjson.
 */
export const detection: Detection = {
  metadata: {
    id: 'power_platform_admin_role_added',
    title: 'Account added to a Power Platform administrator role',
    severity: 'medium',
    description:
      'An account was added (directly or as eligible) to an Entra role that administers every Power Platform environment: Power Platform Administrator, Dynamics 365 Administrator, Fabric Administrator or Global Administrator. Other roles do not alert.',
    response:
      'Confirm the assignment with whoever approved it; remove it (Entra admin center > Roles and administrators) if it was not expected, and review what the account did in the Power Platform admin center since.',
    references: [
      'https://learn.microsoft.com/entra/identity/role-based-access-control/permissions-reference',
      'https://learn.microsoft.com/power-platform/admin/use-service-admin-role-manage-tenant',
    ],
    frameworks: { 'mitre-attack': ['T1098.003: Additional Cloud Roles'] },
    peers: ['Sentinel "Power Platform - Account added to privileged Microsoft Entra roles" (exceeds: Global Administrator too)'],
    recordTypes: [RECORD_TYPES.AzureActiveDirectory],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^add (eligible )?member to role/i.test(e.operation ?? '')) return [];
      const d = directoryChange(e);
      const templateId = d?.modified.get('Role.TemplateId')?.toLowerCase() ?? '';
      const name = d?.modified.get('Role.DisplayName') ?? null;
      const role = ROLES[templateId] ?? (name && NAMES.has(name.toLowerCase()) ? name : null);
      if (!role) return [];
      const member = d?.targetUpn ?? e.objectId ?? 'an account';
      return [
        {
          dedupeKey: e.id,
          title: `${member} added to ${role} by ${e.userId}`,
          eventIds: [e.id],
          detail: { user: e.userId, member, role, roleTemplateId: templateId || null, operation: e.operation },
        },
      ];
    }),
};
