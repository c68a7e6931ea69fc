import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, seg } from '../api.ts';
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

export function NewIntegrationForm({ onCancel }: { onCancel: () => void }) {
  const navigate = useNavigate();
  const [mode, setMode] = useState<IntegrationMode>('customer-app');
  const [name, setName] = useState('');
  const [tenantId, setTenantId] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [secretExpires, setSecretExpires] = useState('');
  const [tenant, setTenant] = useState('');
  const [spObjectId, setSpObjectId] = useState('');
  const [consent, setConsent] = useState<ConsentLink | null>(null);
  const [errors, setErrors] = useState<FormError[]>([]);
  const [busy, setBusy] = useState<null | 'consent' | 'create'>(null);

  const errFor = (f: string) => errors.find((e) => e.field === f);

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

  async function getConsentLink() {
    const errs: FormError[] = [];
    checkTenant(errs);
    setErrors(errs);
    if (errs.length) return;
    setBusy('consent');
    try {
      setConsent(await api.post<ConsentLink>('/integrations/consent-link', { tenant: tenant.trim() }));
    } catch (e) {
      const fe = toFormError(e, FIELDS);
      setErrors([{ ...fe, field: fe.field ?? 'tenant' }]);
    } finally {
      setBusy(null);
    }
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

  async function submit(e: FormEvent) {
    e.preventDefault();
    const errs = validate();
    setErrors(errs);
    if (errs.length) return;
    const named = name.trim() ? { name: name.trim() } : {};
    const body =
      mode === 'customer-app'
        ? { mode, ...named, tenantId: tenantId.trim(), clientId: clientId.trim(), clientSecret, ...(secretExpires ? { secretExpires } : {}) }
        : { mode, ...named, tenant: tenant.trim(), servicePrincipalObjectId: spObjectId.trim() };
    setBusy('create');
    try {
      const created = await api.post<IntegrationDetail>('/integrations', body);
      void navigate(`/integrations/${seg(created.integration.id)}`);
    } catch (err) {
      setErrors([toFormError(err, FIELDS)]);
      setBusy(null);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-describedby="new-integration-intro">
      <p id="new-integration-intro" className="muted">
        Vigil reads your tenant through a service principal. Choose how it is created; the checklist on the next page verifies every setup step.
      </p>
      <ErrorSummary errors={errors} />
      <fieldset className="mode-choice">
        <legend>Setup mode</legend>
        <div className="radio">
          <input
            type="radio"
            id="mode-customer"
            name="mode"
            value="customer-app"
            checked={mode === 'customer-app'}
            onChange={() => {
              setMode('customer-app');
              setErrors([]);
            }}
            aria-describedby="mode-customer-hint"
          />
          <label htmlFor="mode-customer">Customer-created app (Mode A)</label>
          <div className="hint" id="mode-customer-hint">
            You registered an app in your tenant, created a client secret and granted the permissions.
          </div>
        </div>
        <div className="radio">
          <input
            type="radio"
            id="mode-managed"
            name="mode"
            value="managed-app"
            checked={mode === 'managed-app'}
            onChange={() => {
              setMode('managed-app');
              setErrors([]);
            }}
            aria-describedby="mode-managed-hint"
          />
          <label htmlFor="mode-managed">Managed app consent (Mode B)</label>
          <div className="hint" id="mode-managed-hint">
            A global administrator consents to Vigil&apos;s own app in your tenant; no secret to manage.
          </div>
        </div>
      </fieldset>

      <Field
        id="name"
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={errFor('name')}
        hint="Optional: a label for this tenant, such as Contoso production."
        autoComplete="off"
      />

      {mode === 'customer-app' ? (
        <>
          <Field
            id="tenantId"
            label="Tenant ID"
            value={tenantId}
            onChange={(e) => setTenantId(e.target.value)}
            error={errFor('tenantId')}
            hint={WHERE.tenantId}
            placeholder={GUID_EXAMPLE}
            autoComplete="off"
            spellCheck={false}
            required
          />
          <Field
            id="clientId"
            label="Client ID"
            value={clientId}
            onChange={(e) => setClientId(e.target.value)}
            error={errFor('clientId')}
            hint={WHERE.clientId}
            placeholder={GUID_EXAMPLE}
            autoComplete="off"
            spellCheck={false}
            required
          />
          <Field
            id="clientSecret"
            label="Client secret"
            type="password"
            value={clientSecret}
            onChange={(e) => setClientSecret(e.target.value)}
            error={errFor('clientSecret')}
            hint={`${WHERE.clientSecret} Vigil stores it encrypted and never shows it again.`}
            autoComplete="new-password"
            spellCheck={false}
            required
          />
          <Field
            id="secretExpires"
            label="Secret expires"
            type="date"
            value={secretExpires}
            min={todayIso()}
            onChange={(e) => setSecretExpires(e.target.value)}
            error={errFor('secretExpires')}
            hint={`${WHERE.secretExpires} Vigil warns ahead of it; if left empty, 24 months from today is assumed.`}
          />
          <div className="actions">
            <button type="submit" disabled={busy !== null}>
              Create integration
            </button>
            <button type="button" className="secondary" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </>
      ) : (
        <>
          <h3>Step 1: admin consent</h3>
          <Field
            id="tenant"
            label="Tenant ID or primary domain"
            value={tenant}
            onChange={(e) => {
              setTenant(e.target.value);
              setConsent(null);
            }}
            error={errFor('tenant')}
            hint={WHERE.tenant}
            autoComplete="off"
            spellCheck={false}
            required
          />
          <button type="button" onClick={() => void getConsentLink()} disabled={busy !== null}>
            Get consent link
          </button>
          {consent ? (
            <div className="consent" role="status">
              <p>
                A global administrator of tenant <code>{consent.tenantId}</code> opens this link and accepts (valid until {formatTime(consent.expiresAt)}):
              </p>
              <p className="consent-link">
                <a href={consent.url} target="_blank" rel="noopener noreferrer">
                  Open the admin consent page (opens in a new tab)
                </a>
              </p>
              <details>
                <summary>Show the consent URL</summary>
                <pre className="wrap">
                  <code>{consent.url}</code>
                </pre>
              </details>
              {consent.instructions.length ? (
                <ol>
                  {consent.instructions.map((s, i) => (
                    <li key={i}>{s}</li>
                  ))}
                </ol>
              ) : null}
              <p className="small muted">
                Application (client) ID <code>{consent.clientId}</code>; the consent returns to <code>{consent.redirectUri}</code>.
              </p>
            </div>
          ) : null}
          <h3>Step 2: the service principal</h3>
          <Field
            id="servicePrincipalObjectId"
            label="Service principal Object ID"
            value={spObjectId}
            onChange={(e) => setSpObjectId(e.target.value)}
            error={errFor('servicePrincipalObjectId')}
            hint={WHERE.servicePrincipalObjectId}
            placeholder={GUID_EXAMPLE}
            autoComplete="off"
            spellCheck={false}
            required
          />
          <div className="actions">
            <button type="submit" disabled={busy !== null}>
              Create integration
            </button>
            <button type="button" className="secondary" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </>
      )}
    </form>
  );
}
