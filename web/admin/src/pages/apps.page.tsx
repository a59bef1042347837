import { type FormEvent, useState } from "react";
import { Link } from "react-router";
import type { Installation } from "../api/types";
import { useFormat } from "../app/format";
import { appPagePath, rememberInstalled } from "../app/frame-policy";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { DataTable } from "../components/data-table";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty, InlineError } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import { PERMISSIONS } from "./permissions";

const INSTALLATIONS = `query Installations {
  installations { id create_date application { id client_id name application_url callback_urls permissions create_date } }
}`;
const INSTALL = `mutation Install($client_id: String!) { installApplication(client_id: $client_id) { id application { client_id name } } }`;
const UNINSTALL = `mutation Uninstall($client_id: String!) { uninstallApplication(client_id: $client_id) { client_id revoked_tokens } }`;

/** A permission in words (panel.permission.campaigns_read), or its name when the panel does not know it. */
export function describePermission(t: Translate, permission: string): string {
  return (PERMISSIONS as readonly string[]).includes(permission)
    ? t(`panel.permission.${permission.replace(":", "_")}`)
    : permission;
}

function InstallForm({ onInstalled }: { onInstalled: (message: string) => void }) {
  const { t } = useI18n();
  const gql = useGraphql();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const clientId = String(new FormData(form).get("client_id") ?? "").trim();
    if (!clientId) {
      setError(new Error(t("panel.apps.enter_client_id")));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await gql<{ installApplication: { application: { client_id: string; name: string } } }>(INSTALL, {
        client_id: clientId,
      });
      rememberInstalled(result.installApplication.application.client_id);
      form.reset();
      onInstalled(t("panel.apps.installed_flash", { name: result.installApplication.application.name }));
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={onSubmit} data-testid="install-form">
      <div className="form-field grow">
        <label htmlFor="install-client-id">{t("panel.apps.client_id")}</label>
        <input id="install-client-id" name="client_id" placeholder="dnt_app_…" autoComplete="off" spellCheck={false} />
        <p className="hint">{t("panel.apps.client_id_hint")}</p>
      </div>
      <button type="submit" className="button button-primary" disabled={busy} data-testid="install-app">
        {busy ? t("panel.apps.installing") : t("panel.apps.install")}
      </button>
      <InlineError error={error} />
    </form>
  );
}

export function AppsPage() {
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  usePageTitle(t("panel.nav.apps"), org.name);
  const state = useQuery<{ installations: Installation[] }>(INSTALLATIONS);
  const [flash, setFlash] = useState<string | null>(null);
  const done = (message: string) => {
    setFlash(message);
    state.reload();
  };

  return (
    <>
      <PageHeader
        title={t("panel.nav.apps")}
        actions={
          <Link className="button" to={path("developers")}>
            {t("panel.apps.build")}
          </Link>
        }
      >
        <p className="muted">{t("panel.apps.intro", { organization: org.name })}</p>
      </PageHeader>
      <Flash message={flash} />
      <Section title={t("panel.apps.installed_apps")} id="installed">
        <Async state={state}>
          {({ installations }) =>
            installations.length === 0 ? (
              <Empty>
                {t("panel.apps.none")}
                {canWrite ? ` ${t("panel.apps.none_install")}` : ""}
              </Empty>
            ) : (
              <DataTable
                testId="table-installations"
                caption={t("panel.apps.installed_apps")}
                rows={installations.map((installation) => ({ ...installation, id: installation.id }))}
                columns={[
                  {
                    key: "name",
                    label: t("panel.apps.app"),
                    render: (row) => (
                      <div>
                        <strong>{row.application.name}</strong>
                        <div className="muted small">
                          <code>{row.application.client_id}</code>
                        </div>
                      </div>
                    ),
                  },
                  {
                    key: "url",
                    label: t("panel.apps.address"),
                    render: (row) => <span className="break">{row.application.application_url}</span>,
                  },
                  {
                    key: "permissions",
                    label: t("panel.apps.permissions"),
                    render: (row) => (
                      <ul className="plain-list small">
                        {row.application.permissions.map((permission) => (
                          <li key={permission} title={describePermission(t, permission)}>
                            {permission}
                          </li>
                        ))}
                      </ul>
                    ),
                  },
                  {
                    key: "installed",
                    label: t("panel.apps.installed"),
                    render: (row) => fmt.dateTime(row.create_date),
                  },
                  {
                    key: "actions",
                    label: t("panel.column.actions"),
                    render: (row) => (
                      <span className="inline-actions">
                        {/* A full page load, so the page's security policy allows framing this app. */}
                        <a
                          className="button button-primary button-small"
                          href={appPagePath(org.slug, row.application.client_id)}
                          data-testid={`open-app-${row.application.client_id}`}
                        >
                          {t("panel.apps.open")}
                        </a>
                        {canWrite && (
                          <ActionButton
                            label={t("panel.apps.uninstall")}
                            title={t("panel.apps.uninstall_title", { name: row.application.name })}
                            confirmLabel={t("panel.apps.uninstall")}
                            danger
                            className="button button-danger-outline button-small"
                            testId={`uninstall-${row.application.client_id}`}
                            run={async () => {
                              const result = await gql<{ uninstallApplication: { revoked_tokens: number } }>(
                                UNINSTALL,
                                {
                                  client_id: row.application.client_id,
                                },
                              );
                              const revoked = result.uninstallApplication.revoked_tokens;
                              setFlash(
                                t("panel.apps.uninstalled", {
                                  name: row.application.name,
                                  count: revoked,
                                  formatted: fmt.number(revoked),
                                }),
                              );
                            }}
                            onDone={() => state.reload()}
                          >
                            <p>
                              {t("panel.apps.uninstall_body", { name: row.application.name, organization: org.name })}
                            </p>
                          </ActionButton>
                        )}
                      </span>
                    ),
                  },
                ]}
              />
            )
          }
        </Async>
      </Section>
      {canWrite ? (
        <Section title={t("panel.apps.install_title")} id="install">
          <InstallForm onInstalled={done} />
        </Section>
      ) : (
        <p className="notice" data-testid="install-not-allowed">
          {t("panel.apps.read_only", { role: t(`panel.state.${org.role}`) })}
        </p>
      )}
    </>
  );
}
