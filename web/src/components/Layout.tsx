import { useEffect, useRef, type ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import { useAuth } from '../auth.tsx';

const isAgentPage = (p: string) => /^\/integrations\/[^/]+\/agents\//.test(p);
const NAV: { to: string; label: string; active: (p: string) => boolean }[] = [
  { to: '/', label: 'Dashboard', active: (p) => p === '/' },
  { to: '/integrations', label: 'Integrations', active: (p) => p.startsWith('/integrations') && !isAgentPage(p) },
  { to: '/agents', label: 'Agents', active: (p) => p.startsWith('/agents') || isAgentPage(p) },
  { to: '/inventory', label: 'Inventory', active: (p) => p.startsWith('/inventory') || p.startsWith('/environments') },
  { to: '/findings', label: 'Findings', active: (p) => p.startsWith('/findings') },
  { to: '/alerts', label: 'Alerts', active: (p) => p.startsWith('/alerts') },
  { to: '/events', label: 'Events', active: (p) => p.startsWith('/events') },
  { to: '/protection', label: 'Protection', active: (p) => p.startsWith('/protection') },
  { to: '/checks', label: 'Checks', active: (p) => p.startsWith('/checks') },
  { to: '/compliance', label: 'Compliance', active: (p) => p.startsWith('/compliance') },
  { to: '/settings', label: 'Settings', active: (p) => p.startsWith('/settings') },
];

export function Layout({ children }: { children: ReactNode }) {
  const { session, signOut } = useAuth();
  const location = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After navigating, put keyboard and screen-reader focus at the start of the new page.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    mainRef.current?.focus();
  }, [location.pathname]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to main content
      </a>
      <header className="site-header">
        <div className="brand">
          <Link to="/" className="brand-name">
            Vigil
          </Link>
          {session ? (
            <span className="org" title="Organization">
              {session.organization.name}
            </span>
          ) : null}
        </div>
        {session ? (
          <nav aria-label="Main" className="main-nav">
            <ul>
              {NAV.map((n) => (
                <li key={n.to}>
                  <Link to={n.to} aria-current={n.active(location.pathname) ? 'page' : undefined}>
                    {n.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        {session ? (
          <div className="user">
            <span className="user-name">
              {session.user ? (
                <>
                  {session.user.displayName || session.user.email} <span className="role">({session.user.role})</span>
                </>
              ) : null}
            </span>
            <button type="button" className="secondary" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main id="main" tabIndex={-1} ref={mainRef}>
        {children}
      </main>
    </>
  );
}
