import { useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { api, ApiError, setCsrfToken, setUnauthorizedHandler } from './api.ts';
import type { LoginResult, Session } from './types.ts';

interface AuthState {
  /** undefined while the session is being checked, null when signed out. */
  session: Session | null | undefined;
  /** A problem reaching the server while checking the session (not a 401). */
  bootError: ApiError | null;
  isAdmin: boolean;
  signIn: (email: string, password: string) => Promise<void>;
  signOut: () => Promise<void>;
  /** Why the user is on the sign-in page again (the session ended), if that is why. */
  notice: string | null;
}

const AuthContext = createContext<AuthState | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [bootError, setBootError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const sessionRef = useRef<Session | null | undefined>(undefined);
  sessionRef.current = session;
  // What one session fetched is not shown to the next: the cache empties whenever the session ends.
  const queryClient = useQueryClient();

  useEffect(() => {
    setUnauthorizedHandler(() => {
      if (sessionRef.current) setNotice('Your session ended. Sign in again to continue.');
      setSession(null);
      setCsrfToken(null);
      queryClient.clear();
    });
    api
      .get<Session>('/auth/session')
      .then((s) => setSession(s))
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status !== 401) setBootError(e);
        setSession(null);
      });
    return () => setUnauthorizedHandler(null);
  }, [queryClient]);

  const signIn = useCallback(async (email: string, password: string) => {
    const r = await api.post<LoginResult>('/auth/login', { email, password });
    setCsrfToken(r.csrfToken);
    setNotice(null);
    setBootError(null);
    setSession({ via: 'session', user: r.user, apiKey: null, organization: r.organization });
  }, []);

  const signOut = useCallback(async () => {
    try {
      await api.post('/auth/logout');
    } catch {
      // The session is gone either way for this page; the cookie expires on the server's terms.
    }
    setCsrfToken(null);
    setNotice('You are signed out.');
    setSession(null);
    queryClient.clear();
  }, [queryClient]);

  const value = useMemo<AuthState>(
    () => ({ session, bootError, isAdmin: session?.user?.role === 'admin', signIn, signOut, notice }),
    [session, bootError, signIn, signOut, notice],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth outside AuthProvider');
  return ctx;
}
