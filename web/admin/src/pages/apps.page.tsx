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
import { PERMISSION_DESCRIPTIONS } from "./permissions";

const INSTALLATIONS = `query Installations {
  installations { id create_date application { id client_id name application_url callback_urls permissions create_date } }
}`;
const INSTALL = `mutation Install($client_id: String!) { installApplication(client_id: $client_id) { id application { client_id name } } }`;
const UNINSTALL = `mutation Uninstall($client_id: String!) { uninstallApplication(client_id: $client_id) { client_id revoked_tokens } }`;

export function describePermission(permission: string): string {
  return (PERMISSION_DESCRIPTIONS as Record<string, string>)[permission] ?? permission;
}

function InstallForm({ onInstalled }: { onInstalled: (message: string) => void }) {
  const gql = useGraphql();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const clientId = String(new FormData(form).get("client_id") ?? "").trim();
    if (!clientId) {
      setError(new Error("Enter the application's client ID."));
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
      onInstalled(`${result.installApplication.application.name} installed.`);
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={onSubmit} data-testid="install-form">
      <div className="form-field grow">
        <label htmlFor="install-client-id">Client ID</label>
        <input id="install-client-id" name="client_id" placeholder="dnt_app_…" autoComplete="off" spellCheck={false} />
        <p className="hint">The developer of the application gives you its client ID.</p>
      </div>
      <button type="submit" className="button button-primary" disabled={busy} data-testid="install-app">
        {busy ? "Installing…" : "Install"}
      </button>
      <InlineError error={error} />
    </form>
  );
}

export function AppsPage() {
  const { org, path, canWrite } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  usePageTitle("Apps", org.name);
  const state = useQuery<{ installations: Installation[] }>(INSTALLATIONS);
  const [flash, setFlash] = useState<string | null>(null);
  const done = (message: string) => {
    setFlash(message);
    state.reload();
  };

  return (
    <>
      <PageHeader
        title="Apps"
        actions={
          <Link className="button" to={path("developers")}>
            Build an app
          </Link>
        }
      >
        <p className="muted">Applications installed in {org.name} open here, inside the admin panel.</p>
      </PageHeader>
      <Flash message={flash} />
      <Section title="Installed apps" id="installed">
        <Async state={state}>
          {({ installations }) =>
            installations.length === 0 ? (
              <Empty>No apps installed yet.{canWrite ? " Install one with its client ID below." : ""}</Empty>
            ) : (
              <DataTable
                testId="table-installations"
                caption="Installed apps"
                rows={installations.map((installation) => ({ ...installation, id: installation.id }))}
                columns={[
                  {
                    key: "name",
                    label: "App",
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
                    label: "Address",
                    render: (row) => <span className="break">{row.application.application_url}</span>,
                  },
                  {
                    key: "permissions",
                    label: "Permissions",
                    render: (row) => (
                      <ul className="plain-list small">
                        {row.application.permissions.map((permission) => (
                          <li key={permission} title={describePermission(permission)}>
                            {permission}
                          </li>
                        ))}
                      </ul>
                    ),
                  },
                  { key: "installed", label: "Installed", render: (row) => fmt.dateTime(row.create_date) },
                  {
                    key: "actions",
                    label: "Actions",
                    render: (row) => (
                      <span className="inline-actions">
                        {/* A full page load, so the page's security policy allows framing this app. */}
                        <a
                          className="button button-primary button-small"
                          href={appPagePath(org.slug, row.application.client_id)}
                          data-testid={`open-app-${row.application.client_id}`}
                        >
                          Open
                        </a>
                        {canWrite && (
                          <ActionButton
                            label="Uninstall"
                            title={`Uninstall ${row.application.name}?`}
                            confirmLabel="Uninstall"
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
                                `${row.application.name} uninstalled; ${revoked} access ${revoked === 1 ? "token" : "tokens"} revoked.`,
                              );
                            }}
                            onDone={() => state.reload()}
                          >
                            <p>
                              {row.application.name} loses access to {org.name} at once: every access and refresh token
                              it holds for this organization is revoked.
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
        <Section title="Install an app" id="install">
          <InstallForm onInstalled={done} />
        </Section>
      ) : (
        <p className="notice" data-testid="install-not-allowed">
          Only owners and admins can install or uninstall apps. Your role is {org.role}.
        </p>
      )}
    </>
  );
}
