import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter, RouterProvider } from "react-router";
import { OrgLayout } from "./app/org-layout";
import { SessionProvider } from "./app/session-context";
import { StepUpDialog } from "./components/step-up-dialog";
import { I18nProvider } from "./i18n";
import { AccountPage } from "./pages/account.page";
import { AccountSecurityPage } from "./pages/account-security.page";
import { AppFramePage } from "./pages/app-frame.page";
import { AppsPage } from "./pages/apps.page";
import { AuditLogPage } from "./pages/audit-log.page";
import { CampaignDetailPage } from "./pages/campaign-detail.page";
import { CampaignEditorPage } from "./pages/campaign-editor.page";
import { CheckoutDetailPage } from "./pages/checkout-detail.page";
import { CollectionPage } from "./pages/collection.page";
import { DashboardPage } from "./pages/dashboard.page";
import { DevelopersPage } from "./pages/developers.page";
import { DonationDetailPage } from "./pages/donation-detail.page";
import { EmailSettingsPage } from "./pages/email-settings.page";
import { HomePage } from "./pages/home.page";
import { ImportsPage } from "./pages/imports.page";
import { LegalProfilePage } from "./pages/legal-profile.page";
import { MembersPage } from "./pages/members.page";
import { NotFoundPage } from "./pages/not-found.page";
import { OfflineDonationPage } from "./pages/offline-donation.page";
import { OutboxMessagePage, OutboxPage } from "./pages/outbox.page";
import { PaymentDetailPage } from "./pages/payment-detail.page";
import { RetentionPage } from "./pages/retention.page";
import { SettingsPage } from "./pages/settings.page";
import { SignInPage } from "./pages/sign-in.page";
import { SupporterDetailPage } from "./pages/supporter-detail.page";
import { SupporterDuplicatesPage } from "./pages/supporter-duplicates.page";
import { SupporterEditorPage } from "./pages/supporter-editor.page";
import { WebhookEndpointPage, WebhooksPage } from "./pages/webhooks.page";
import "./styles.css";

const router = createBrowserRouter(
  [
    { path: "/", element: <HomePage /> },
    { path: "/sign-in", element: <SignInPage /> },
    {
      path: "/o/:org",
      element: <OrgLayout />,
      children: [
        { index: true, element: <DashboardPage /> },
        { path: "campaigns", element: <CollectionPage key="campaigns" name="campaigns" /> },
        { path: "campaigns/new", element: <CampaignEditorPage /> },
        { path: "campaigns/:id", element: <CampaignDetailPage /> },
        { path: "campaigns/:id/edit", element: <CampaignEditorPage /> },
        { path: "supporters", element: <CollectionPage key="supporters" name="supporters" /> },
        { path: "supporters/new", element: <SupporterEditorPage /> },
        { path: "supporters/duplicates", element: <SupporterDuplicatesPage /> },
        { path: "imports", element: <ImportsPage /> },
        { path: "supporters/:id", element: <SupporterDetailPage /> },
        { path: "supporters/:id/edit", element: <SupporterEditorPage /> },
        { path: "donations", element: <CollectionPage key="donations" name="donations" /> },
        { path: "donations/new", element: <OfflineDonationPage /> },
        { path: "donations/:id", element: <DonationDetailPage /> },
        { path: "payments", element: <CollectionPage key="payments" name="payments" /> },
        { path: "payments/:id", element: <PaymentDetailPage /> },
        { path: "checkouts", element: <CollectionPage key="checkouts" name="checkouts" /> },
        { path: "checkouts/:id", element: <CheckoutDetailPage /> },
        { path: "retention", element: <RetentionPage /> },
        { path: "apps", element: <AppsPage /> },
        { path: "apps/:clientId", element: <AppFramePage /> },
        { path: "developers", element: <DevelopersPage /> },
        { path: "members", element: <MembersPage /> },
        { path: "settings", element: <SettingsPage /> },
        { path: "settings/email", element: <EmailSettingsPage /> },
        { path: "settings/legal", element: <LegalProfilePage /> },
        { path: "outbox", element: <OutboxPage /> },
        { path: "outbox/:id", element: <OutboxMessagePage /> },
        { path: "audit", element: <AuditLogPage /> },
        { path: "account", element: <AccountPage /> },
        { path: "account/security", element: <AccountSecurityPage /> },
        { path: "webhooks", element: <WebhooksPage /> },
        { path: "webhooks/:id", element: <WebhookEndpointPage /> },
        { path: "*", element: <NotFoundPage /> },
      ],
    },
    { path: "*", element: <NotFoundPage standalone /> },
  ],
  { basename: "/admin" },
);

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <I18nProvider>
        <SessionProvider>
          <RouterProvider router={router} />
          <StepUpDialog />
        </SessionProvider>
      </I18nProvider>
    </StrictMode>,
  );
}
