import { useCallback, useEffect, useState } from 'react';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter';
import type { Schemas } from '../../clients/typescript/index';
import { client, setUnauthorizedHandler, unwrap } from './api';
import { ApprovalsPage } from './pages/Approvals';
import { AssignPage } from './pages/Assign';
import { AccountPage } from './pages/Account';
import { AuditPage } from './pages/Audit';
import { CataloguePage } from './pages/Catalogue';
import { ChangeRequestPage } from './pages/ChangeRequest';
import { KeysPage } from './pages/Keys';
import { MerchantPage } from './pages/Merchant';
import { MerchantsPage } from './pages/Merchants';
import { NewMerchantPage } from './pages/NewMerchant';
import { SignIn } from './pages/SignIn';
import { WebhooksPage } from './pages/Webhooks';
import { UsersPage } from './pages/Users';
import { endSession, resumeSession, signOut, startSession, type TokenSet } from './session';
import { Loading } from './ui';

const EXPIRED = 'Your session has expired. Sign in again to continue.';

export function App() {
  return (
    <Router base="/console">
      <Shell />
    </Router>
  );
}

function Shell() {
  const [me, setMe] = useState<Schemas['CurrentUser'] | null>();
  const [notice, setNotice] = useState<string>();

  const expire = useCallback(() => {
    endSession();
    setMe(null);
    setNotice(EXPIRED);
  }, []);
  const loadMe = useCallback(async () => setMe(await unwrap(client.GET('/v1/users/me'))), []);

  useEffect(() => {
    setUnauthorizedHandler(expire);
    void resumeSession(expire).then((resumed) => (resumed ? loadMe().catch(() => setMe(null)) : setMe(null)));
  }, [expire, loadMe]);

  if (me === undefined) return <Loading what="the console" />;
  if (me === null)
    return (
      <SignIn
        notice={notice}
        onToken={async (token: TokenSet) => {
          startSession(token, expire);
          await loadMe();
          setNotice(undefined);
        }}
      />
    );
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">feegate</span>
        <nav aria-label="Sections">
          <NavLink href="/keys">API keys</NavLink>
          <NavLink href="/fee-plans">Fee plans</NavLink>
          <NavLink href="/catalogue">Catalogue</NavLink>
          <NavLink href="/merchants">Merchants</NavLink>
          <NavLink href="/approvals">Approvals</NavLink>
          <NavLink href="/webhooks">Webhooks</NavLink>
          <NavLink href="/audit">Audit log</NavLink>
          <NavLink href="/users">Users</NavLink>
          <NavLink href="/account">My account</NavLink>
        </nav>
        <span className="who">{me.user}</span>
        <button
          type="button"
          onClick={() =>
            void signOut().then(() => {
              setMe(null);
              setNotice('You are signed out.');
            })
          }
        >
          Sign out
        </button>
      </header>
      <main id="main">
        <Switch>
          <Route path="/keys">{() => <KeysPage customerId={me.customer_id} />}</Route>
          <Route path="/fee-plans">{() => <AssignPage />}</Route>
          <Route path="/catalogue">{() => <CataloguePage />}</Route>
          <Route path="/merchants">{() => <MerchantsPage />}</Route>
          <Route path="/merchants/new">{() => <NewMerchantPage customerId={me.customer_id} />}</Route>
          <Route path="/merchants/:id">{(params) => <MerchantPage id={params.id} customerId={me.customer_id} />}</Route>
          <Route path="/approvals">{() => <ApprovalsPage />}</Route>
          <Route path="/approvals/:id">{(params) => <ChangeRequestPage id={params.id} userId={me.id} />}</Route>
          <Route path="/webhooks">{() => <WebhooksPage />}</Route>
          <Route path="/audit">{() => <AuditPage />}</Route>
          <Route path="/users">{() => <UsersPage />}</Route>
          <Route path="/account">{() => <AccountPage email={me.user} />}</Route>
          <Route>
            <Redirect to="/keys" />
          </Route>
        </Switch>
      </main>
    </>
  );
}

function NavLink({ href, children }: { href: string; children: string }) {
  const [location] = useLocation();
  const current = location === href || location.startsWith(`${href}/`);
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}
