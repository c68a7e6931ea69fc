import { Route, Routes, useLocation } from 'react-router';
import { useAuth } from './auth.tsx';
import { ErrorBoundary } from './components/ErrorBoundary.tsx';
import { Layout } from './components/Layout.tsx';
import { ErrorMessage, Loading } from './components/ui.tsx';
import { AgentPage } from './pages/Agent.tsx';
import { AlertDetailPage } from './pages/AlertDetail.tsx';
import { AlertsPage } from './pages/Alerts.tsx';
import { ChecksPage } from './pages/Checks.tsx';
import { CompliancePage } from './pages/Compliance.tsx';
import { DashboardPage } from './pages/Dashboard.tsx';
import { AgentsPage, EnvironmentPage } from './pages/Estate.tsx';
import { EventsPage } from './pages/Events.tsx';
import { FindingDetailPage } from './pages/FindingDetail.tsx';
import { FindingsPage } from './pages/Findings.tsx';
import { IntegrationDetailPage } from './pages/IntegrationDetail.tsx';
import { IntegrationsPage } from './pages/Integrations.tsx';
import { InventoryPage } from './pages/Inventory.tsx';
import { NotFoundPage } from './pages/NotFound.tsx';
import { ConversationPage, ProtectionIntegrationPage, ProtectionPage } from './pages/Protection.tsx';
import { SettingsPage } from './pages/Settings.tsx';
import { SignInPage } from './pages/SignIn.tsx';

export function App() {
  const { session, bootError } = useAuth();
  const location = useLocation();
  if (session === undefined) {
    return (
      <Layout>
        <Loading label="Checking your session…" />
      </Layout>
    );
  }
  if (session === null) {
    return (
      <Layout>
        {bootError ? <ErrorMessage error={bootError} /> : null}
        <SignInPage />
      </Layout>
    );
  }
  return (
    <Layout>
      <ErrorBoundary resetKey={location.pathname}>
        <Routes>
          <Route path="/" element={<DashboardPage />} />
          <Route path="/integrations" element={<IntegrationsPage />} />
          <Route path="/integrations/:id" element={<IntegrationDetailPage />} />
          <Route path="/integrations/:integrationId/agents/:agentId" element={<AgentPage />} />
          <Route path="/inventory" element={<InventoryPage />} />
          <Route path="/agents" element={<AgentsPage />} />
          <Route path="/environments/:integrationId/:environmentId" element={<EnvironmentPage />} />
          <Route path="/findings" element={<FindingsPage />} />
          <Route path="/findings/:id" element={<FindingDetailPage />} />
          <Route path="/alerts" element={<AlertsPage />} />
          <Route path="/alerts/:id" element={<AlertDetailPage />} />
          <Route path="/events" element={<EventsPage />} />
          <Route path="/checks" element={<ChecksPage />} />
          <Route path="/compliance" element={<CompliancePage />} />
          <Route path="/settings/*" element={<SettingsPage />} />
          <Route path="/protection" element={<ProtectionPage />} />
          <Route path="/protection/:integrationId" element={<ProtectionIntegrationPage />} />
          <Route path="/protection/:integrationId/conversations/:conversationId" element={<ConversationPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </ErrorBoundary>
    </Layout>
  );
}
