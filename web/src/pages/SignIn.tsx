import { useState, type FormEvent } from 'react';
import { ApiError } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorSummary, Field, type FormError } from '../components/ui.tsx';
import { useForm, useTitle } from '../hooks.ts';

export function SignInPage() {
  useTitle('Sign in');
  const { signIn, notice } = useAuth();
  const form = useForm({ email: '', password: '' });
  const { email, password } = form.values;
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const errs: FormError[] = [];
    if (!email.trim()) errs.push({ field: 'email', message: 'Enter your e-mail address.' });
    if (!password) errs.push({ field: 'password', message: 'Enter your password.' });
    form.setErrors(errs);
    if (errs.length) return;
    setBusy(true);
    try {
      await signIn(email.trim(), password);
    } catch (err) {
      const a = err instanceof ApiError ? err : null;
      const field = a?.field === 'email' || a?.field === 'password' ? a.field : undefined;
      form.setErrors([
        {
          field,
          message:
            a?.code === 'SIGN_IN_FAILED' || a?.status === 401
              ? 'The e-mail address or password is not right, or the account is locked or disabled.'
              : (a?.message ?? 'Sign-in failed.'),
          remediation:
            a?.remediation ??
            (a?.status === 401
              ? 'Check both and try again; after five failures the account is locked for 15 minutes. An administrator can reset it with vigil users.'
              : undefined),
        },
      ]);
      form.set('password', '');
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="narrow">
      <h1>Sign in to Vigil</h1>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorSummary errors={form.errors} title="Sign-in failed" />
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Field {...form.field('email')} label="Email" type="email" autoComplete="username" required />
        <Field {...form.field('password')} label="Password" type="password" autoComplete="current-password" required />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </div>
  );
}
