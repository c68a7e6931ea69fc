import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, seg } from '../api.ts';
import { useForm, type FieldBinding } from '../hooks.ts';
import { useApiMutation } from '../query.ts';
import type { ConsentLink, IntegrationDetail, IntegrationMode } from '../types.ts';
import { ErrorSummary, Field, formatTime, isDomain, isGuid, todayIso, type FormError } from './ui.tsx';

/** Where each value is found, said once for the hint and again in the error. */
export const WHERE = {
  tenantId: 'Microsoft Entra admin center › Identity › Overview › Tenant ID.',
  clientId: 'Microsoft Entra admin center › Identity › Applications › App registrations › your app › Overview › Application (client) ID.',
  clientSecret: "The secret's Value (not its Secret ID) from your app's Certificates & secrets page; it is shown only once, when created.",
  secretExpires: 'The Expires date shown beside the secret on the Certificates & secrets page (24 months is the instructed lifetime).',
  tenant: 'The Tenant ID (a GUID) or the primary domain, such as contoso.onmicrosoft.com, both on the Overview page of the Microsoft Entra admin center.',
  servicePrincipalObjectId:
    'After consenting: Microsoft Entra admin center › Identity › Applications › Enterprise applications › the Vigil app › Overview › Object ID (not the Application ID).',
};

const GUID_EXAMPLE = '00000000-0000-0000-0000-000000000000';

/** Maps an API error's `field` (possibly a path like `body.tenantId`) to one of the form's input ids. */
function fieldOf(err: ApiError, known: readonly string[]): string | undefined {
  if (!err.field) return undefined;
  const last = err.field.split(/[./]/).filter(Boolean).pop() ?? err.field;
  return known.includes(last) ? last : undefined;
}

export function toFormError(e: unknown, known: readonly string[]): FormError {
  if (e instanceof ApiError) return { field: fieldOf(e, known), message: e.message, remediation: e.remediation };
  return { message: (e as Error).message || 'Something went wrong.' };
}

/** Validates a customer-app secret and its optional expiry; used by creation and rotation. */
export function validateSecret(clientSecret: string, secretExpires: string, errs: FormError[]): void {
  if (!clientSecret.trim())
    errs.push({
      field: 'clientSecret',
      message: 'Enter the client secret.',
      remediation: `Paste ${WHERE.clientSecret.charAt(0).toLowerCase()}${WHERE.clientSecret.slice(1)}`,
    });
  if (secretExpires) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(secretExpires) || Number.isNaN(Date.parse(secretExpires))) {
      errs.push({ field: 'secretExpires', message: 'Enter the expiry date as YYYY-MM-DD.', remediation: `Use ${WHERE.secretExpires}` });
    } else if (secretExpires <= todayIso()) {
      errs.push({
        field: 'secretExpires',
        message: 'The secret expiry date must be in the future.',
        remediation: 'A secret past its expiry no longer signs in: create a new secret under Certificates & secrets and enter its value and Expires date.',
      });
    }
  }
}

const FIELDS = ['name', 'tenantId', 'clientId', 'clientSecret', 'secretExpires', 'tenant', 'servicePrincipalObjectId'] as const;

/** What a GUID input takes besides its field: the example as placeholder, no autocomplete or spelling check. */
const GUID_INPUT = { placeholder: GUID_EXAMPLE, autoComplete: 'off', spellCheck: false, required: true } as const;

/** The client secret and its expiry date, as creation and rotation ask for them (each with its own hints). */
export function SecretFields({
  form,
  hints,
}: {
  form: { field: (k: 'clientSecret' | 'secretExpires') => FieldBinding };
  hints: { secret: string; expires: string };
}) {
  return (
    <>
      <Field
        {...form.field('clientSecret')}
        label="Client secret"
        type="password"
        hint={hints.secret}
        autoComplete="new-password"
        spellCheck={false}
        required
      />
      <Field {...form.field('secretExpires')} label="Secret expires" type="date" min={todayIso()} hint={hints.expires} />
    </>
  );
}

const MODES: { mode: IntegrationMode; id: string; label: string; hint: string }[] = [
  {
    mode: 'customer-app',
    id: 'mode-customer',
    label: 'Customer-created app (Mode A)',
    hint: 'You registered an app in your tenant, created a client secret and granted the permissions.',
  },
  {
    mode: 'managed-app',
    id: 'mode-managed',
    label: 'Managed app consent (Mode B)',
    hint: "A global administrator consents to Vigil's own app in your tenant; no secret to manage.",
  },
];

export function NewIntegrationForm({ onCancel }: { onCancel: () => void }) {
  const navigate = useNavigate();
  const [mode, setMode] = useState<IntegrationMode>('customer-app');
  const form = useForm({ name: '', tenantId: '', clientId: '', clientSecret: '', secretExpires: '', tenant: '', servicePrincipalObjectId: '' });
  const { name, tenantId, clientId, clientSecret, secretExpires, tenant, servicePrincipalObjectId: spObjectId } = form.values;
  const consent = useApiMutation((t: string) => api.post<ConsentLink>('/integrations/consent-link', { tenant: t }));
  const create = useApiMutation((body: object) => api.post<IntegrationDetail>('/integrations', body), {
    invalidates: ['/integrations', '/dashboard'],
    onSuccess: (created) => void navigate(`/integrations/${seg(created.integration.id)}`),
  });
  const busy = consent.isPending || create.isPending;

  function checkTenant(errs: FormError[]) {
    const t = tenant.trim();
    if (!t)
      errs.push({
        field: 'tenant',
        message: 'Enter the tenant ID or primary domain.',
        remediation: `Find ${WHERE.tenant.charAt(0).toLowerCase()}${WHERE.tenant.slice(1)}`,
      });
    else if (!isGuid(t) && !isDomain(t)) {
      errs.push({
        field: 'tenant',
        message: `"${t}" is neither a tenant ID (a GUID like ${GUID_EXAMPLE}) nor a domain name.`,
        remediation: `Use ${WHERE.tenant.charAt(0).toLowerCase()}${WHERE.tenant.slice(1)}`,
      });
    }
  }

  function getConsentLink() {
    const errs: FormError[] = [];
    checkTenant(errs);
    form.setErrors(errs);
    if (errs.length) return;
    consent.mutate(tenant.trim(), {
      onError: (e) => {
        const fe = toFormError(e, FIELDS);
        form.setErrors([{ ...fe, field: fe.field ?? 'tenant' }]);
      },
    });
  }
  function validate(): FormError[] {
    const errs: FormError[] = [];
    if (name.trim().length > 200)
      errs.push({ field: 'name', message: 'The name is longer than 200 characters.', remediation: 'Use a shorter label, such as "Contoso production".' });
    if (mode === 'customer-app') {
      if (!isGuid(tenantId)) {
        errs.push({
          field: 'tenantId',
          message: tenantId.trim() ? `Tenant ID must be a GUID like ${GUID_EXAMPLE}.` : 'Enter the tenant ID.',
          remediation: `Find it in the ${WHERE.tenantId}`,
        });
      }
      if (!isGuid(clientId)) {
        errs.push({
          field: 'clientId',
          message: clientId.trim() ? `Client ID must be a GUID like ${GUID_EXAMPLE}.` : 'Enter the client ID.',
          remediation: `Find it in the ${WHERE.clientId}`,
        });
      } else if (isGuid(tenantId) && clientId.trim().toLowerCase() === tenantId.trim().toLowerCase()) {
        errs.push({
          field: 'clientId',
          message: 'The client ID is the same as the tenant ID.',
          remediation: `Copy the Application (client) ID of the app registration: ${WHERE.clientId}`,
        });
      }
      validateSecret(clientSecret, secretExpires, errs);
    } else {
      checkTenant(errs);
      if (!isGuid(spObjectId)) {
        errs.push({
          field: 'servicePrincipalObjectId',
          message: spObjectId.trim() ? `Service principal Object ID must be a GUID like ${GUID_EXAMPLE}.` : 'Enter the service principal Object ID.',
          remediation: `Find it in the ${WHERE.servicePrincipalObjectId.replace('After consenting: ', '')}`,
        });
      }
    }
    return errs;
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const errs = validate();
    form.setErrors(errs);
    if (errs.length) return;
    const named = name.trim() ? { name: name.trim() } : {};
    const body =
      mode === 'customer-app'
        ? { mode, ...named, tenantId: tenantId.trim(), clientId: clientId.trim(), clientSecret, ...(secretExpires ? { secretExpires } : {}) }
        : { mode, ...named, tenant: tenant.trim(), servicePrincipalObjectId: spObjectId.trim() };
    create.mutate(body, { onError: (err) => form.setErrors([toFormError(err, FIELDS)]) });
  }

  const c = consent.data;
  return (
    <form onSubmit={submit} noValidate aria-describedby="new-integration-intro">
      <p id="new-integration-intro" className="muted">
        Vigil reads your tenant through a service principal. Choose how it is created; the checklist on the next page verifies every setup step.
      </p>
      <ErrorSummary errors={form.errors} />
      <fieldset className="mode-choice">
        <legend>Setup mode</legend>
        {MODES.map((m) => (
          <div className="radio" key={m.mode}>
            <input
              type="radio"
              id={m.id}
              name="mode"
              value={m.mode}
              checked={mode === m.mode}
              onChange={() => {
                setMode(m.mode);
                form.setErrors([]);
              }}
              aria-describedby={`${m.id}-hint`}
            />
            <label htmlFor={m.id}>{m.label}</label>
            <div className="hint" id={`${m.id}-hint`}>
              {m.hint}
            </div>
          </div>
        ))}
      </fieldset>

      <Field {...form.field('name')} label="Name" hint="Optional: a label for this tenant, such as Contoso production." autoComplete="off" />

      {mode === 'customer-app' ? (
        <>
          <Field {...form.field('tenantId')} label="Tenant ID" hint={WHERE.tenantId} {...GUID_INPUT} />
          <Field {...form.field('clientId')} label="Client ID" hint={WHERE.clientId} {...GUID_INPUT} />
          <SecretFields
            form={form}
            hints={{
              secret: `${WHERE.clientSecret} Vigil stores it encrypted and never shows it again.`,
              expires: `${WHERE.secretExpires} Vigil warns ahead of it; if left empty, 24 months from today is assumed.`,
            }}
          />
        </>
      ) : (
        <>
          <h3>Step 1: admin consent</h3>
          <Field
            {...form.field('tenant')}
            onChange={(e) => {
              form.set('tenant', e.target.value);
              consent.reset();
            }}
            label="Tenant ID or primary domain"
            hint={WHERE.tenant}
            autoComplete="off"
            spellCheck={false}
            required
          />
          <button type="button" onClick={getConsentLink} disabled={busy}>
            Get consent link
          </button>
          {c ? (
            <div className="consent" role="status">
              <p>
                A global administrator of tenant <code>{c.tenantId}</code> opens this link and accepts (valid until {formatTime(c.expiresAt)}):
              </p>
              <p className="consent-link">
                <a href={c.url} target="_blank" rel="noopener noreferrer">
                  Open the admin consent page (opens in a new tab)
                </a>
              </p>
              <details>
                <summary>Show the consent URL</summary>
                <pre className="wrap">
                  <code>{c.url}</code>
                </pre>
              </details>
              {c.instructions.length ? (
                <ol>
                  {c.instructions.map((s, i) => (
                    <li key={i}>{s}</li>
                  ))}
                </ol>
              ) : null}
              <p className="small muted">
                Application (client) ID <code>{c.clientId}</code>; the consent returns to <code>{c.redirectUri}</code>.
              </p>
            </div>
          ) : null}
          <h3>Step 2: the service principal</h3>
          <Field {...form.field('servicePrincipalObjectId')} label="Service principal Object ID" hint={WHERE.servicePrincipalObjectId} {...GUID_INPUT} />
        </>
      )}
      <div className="actions">
        <button type="submit" disabled={busy}>
          Create integration
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
