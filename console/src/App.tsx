import { useEffect, useState } from 'react';
import { onUnauthorized } from './api/client';
import { forgetKey, storedKey } from './api/session';
import { hasSession, signOutOfSession } from './api/sso';
import { WhoAmI } from './components/WhoAmI';
import { Link, navigate, useRoute } from './router';
import { SignIn } from './pages/SignIn';
import { RunsPage } from './pages/RunsPage';
import { NewRunPage } from './pages/NewRunPage';
import { RunDetailPage } from './pages/RunDetailPage';
import { SchedulesPage } from './pages/SchedulesPage';
import { WebhooksPage } from './pages/WebhooksPage';
import { IdentitiesPage } from './pages/IdentitiesPage';
import { EnvironmentsPage } from './pages/EnvironmentsPage';
import { ModelsPage } from './pages/ModelsPage';
import { ApiKeysPage } from './pages/ApiKeysPage';
import { AuditPage } from './pages/AuditPage';
import { NotificationsPage } from './pages/NotificationsPage';
import { UsagePage } from './pages/UsagePage';
import { ApprovalsPage } from './pages/ApprovalsPage';
import { PendingApprovalsBadge } from './components/PendingApprovalsBadge';

const NAV = [
  ['/runs', 'Runs'],
  ['/approvals', 'Approvals'],
  ['/schedules', 'Schedules'],
  ['/webhooks', 'Webhooks'],
  ['/identities', 'Identities'],
  ['/environments', 'Environments'],
  ['/usage', 'Usage'],
  ['/models', 'Models'],
  ['/api-keys', 'API keys'],
  ['/audit', 'Audit'],
  ['/notifications', 'Notifications'],
] as const;

/**
 * The header: the brand, the sections, the API docs and who is signed in. On a narrow screen
 * (styles.css) only the brand and a Menu button show; the button opens the rest as a drawer
 * under the header, which closes on navigation or Escape.
 */
function Header({ path, onSignOut }: { path: string; onSignOut: () => void }) {
  const section = '/' + (path.split('/')[1] || 'runs');
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const close = (event: KeyboardEvent) => event.key === 'Escape' && setOpen(false);
    window.addEventListener('keydown', close);
    return () => window.removeEventListener('keydown', close);
  }, [open]);
  return (
    <header className={`top${open ? ' menu-open' : ''}`}>
      <Link to="/runs" className="brand">
        Ambient Console
      </Link>
      <button
        type="button"
        className="menu-toggle"
        aria-expanded={open}
        aria-controls="main-menu"
        onClick={() => setOpen(!open)}
      >
        <span className="menu-icon" aria-hidden="true" />
        {open ? 'Close' : 'Menu'}
      </button>
      <div className="menu" id="main-menu">
        {/* A link chosen closes the drawer, even one to the page already shown. */}
        <nav
          aria-label="Main"
          onClick={(event) => (event.target as HTMLElement).closest('a') && setOpen(false)}
        >
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}>
                <Link to={to} aria-current={section === to ? 'page' : undefined}>
                  {label}
                  {to === '/approvals' && <PendingApprovalsBadge />}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <a className="docs-link" href="/api/docs" target="_blank" rel="noreferrer">
          API docs
        </a>
        <div className="sign-out">
          <WhoAmI />
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </div>
    </header>
  );
}

function Page({ path }: { path: string }) {
  const run = /^\/runs\/([^/]+)$/.exec(path);
  if (path === '/runs/new') return <NewRunPage />;
  if (run) {
    const runId = decodeURIComponent(run[1]);
    // Keyed: another run's page starts afresh, and no answer for the last one reaches it.
    return <RunDetailPage key={runId} runId={runId} />;
  }
  if (path === '/' || path === '/runs') return <RunsPage />;
  if (path === '/schedules') return <SchedulesPage />;
  if (path === '/webhooks') return <WebhooksPage />;
  if (path === '/identities') return <IdentitiesPage />;
  if (path === '/environments') return <EnvironmentsPage />;
  if (path === '/models') return <ModelsPage />;
  if (path === '/api-keys') return <ApiKeysPage />;
  if (path === '/audit') return <AuditPage />;
  if (path === '/notifications') return <NotificationsPage />;
  if (path === '/usage') return <UsagePage />;
  if (path === '/approvals') return <ApprovalsPage />;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No console page at this address. <Link to="/runs">Go to the runs.</Link>
      </p>
    </section>
  );
}

export function App() {
  const { path } = useRoute();
  // Unknown until the server says whether this browser has an SSO session.
  const [signedIn, setSignedIn] = useState<boolean | undefined>(() =>
    storedKey() !== null ? true : undefined,
  );
  const [message, setMessage] = useState<string>();

  useEffect(() => {
    if (signedIn === undefined) hasSession().then(setSignedIn, () => setSignedIn(false));
  }, [signedIn]);

  useEffect(() => {
    onUnauthorized((text) => {
      forgetKey();
      setMessage(text);
      setSignedIn(false);
    });
  }, []);

  if (signedIn === undefined) return null;
  if (!signedIn) {
    return (
      <SignIn
        message={message}
        onSignedIn={() => {
          setMessage(undefined);
          setSignedIn(true);
        }}
      />
    );
  }

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Header
        path={path}
        onSignOut={() => {
          const ended = storedKey() !== null ? Promise.resolve() : signOutOfSession();
          forgetKey();
          ended.then(
            () => setMessage('Signed out.'),
            (failure: unknown) => setMessage(String(failure)),
          );
          setSignedIn(false);
          navigate('/runs', true);
        }}
      />
      <main id="main" tabIndex={-1}>
        <Page path={path} />
      </main>
    </>
  );
}
