import { type FormEvent, useEffect, useRef, useState } from "react";
import { Link } from "react-router";
import { ApiError } from "../api/graphql";
import type { Installation } from "../api/types";
import { useFormat } from "../app/format";
import { appPagePath, rememberInstalled } from "../app/frame-policy";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { DataTable } from "../components/data-table";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty, InlineError } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import { PERMISSIONS } from "./permissions";

const INSTALLATIONS = `query Installations {
  installations { id create_date application { id client_id name application_url callback_urls permissions create_date } }
}`;
const LOOK_UP = `query ApplicationToInstall($client_id: String!) {
  applicationToInstall(client_id: $client_id) { client_id name application_url permissions { name description } }
}`;
const INSTALL = `mutation Install($client_id: String!, $permissions: [String!]) {
  installApplication(client_id: $client_id, permissions: $permissions) { id application { client_id name } }
}`;
const UNINSTALL = `mutation Uninstall($client_id: String!) { uninstallApplication(client_id: $client_id) { client_id revoked_tokens } }`;

interface ApplicationToInstall {
  client_id: string;
  name: string;
  application_url: string;
  /** `description` is the server's words, in the member's saved language. */
  permissions: { name: string; description: string }[];
}

/** A permission in the words of the OAuth consent page (oauth.permissions.campaigns_read), or its name when unknown. */
export function describePermission(t: Translate, permission: string): string {
  return (PERMISSIONS as readonly string[]).includes(permission)
    ? t(`oauth.permissions.${permission.replace(":", "_")}`)
    : permission;
}

/** What installing grants, shown before anything is installed: the panel's own consent screen. */
function InstallConfirmation({
  application,
  busy,
  error,
  onInstall,
  onCancel,
}: {
  application: ApplicationToInstall;
  busy: boolean;
  error: string | null;
  onInstall: () => void;
  onCancel: () => void;
}) {
  const { t } = useI18n();
  const { org } = useOrg();
  const heading = useRef<HTMLHeadingElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new look-up (another application) takes the focus again.
  useEffect(() => {
    heading.current?.focus();
  }, [application]);
  const name = application.name;
  return (
    <section aria-labelledby="install-confirm-title" data-testid="install-confirm">
      <h3 id="install-confirm-title" tabIndex={-1} ref={heading}>
        {t("panel.apps.confirm_title", { name, organization: org.name })}
      </h3>
      <Fields
        items={[
          [
            t("panel.apps.address"),
            <span key="url" className="break">
              {application.application_url}
            </span>,
          ],
          [t("panel.apps.client_id"), <code key="client_id">{application.client_id}</code>],
        ]}
      />
      {application.permissions.length === 0 ? (
        <p data-testid="install-permissions-none">{t("panel.apps.asks_nothing", { name })}</p>
      ) : (
        <>
          <p id="install-permissions-intro">{t("panel.apps.will_be_able_to", { name })}</p>
          <ul aria-labelledby="install-permissions-intro" data-testid="install-permissions">
            {application.permissions.map((permission) => (
              <li key={permission.name} data-permission={permission.name}>
                {(PERMISSIONS as readonly string[]).includes(permission.name)
                  ? describePermission(t, permission.name)
                  : permission.description}{" "}
                <code className="muted small">{permission.name}</code>
              </li>
            ))}
          </ul>
          <p className="hint">{t("panel.apps.confirm_note", { organization: org.name })}</p>
        </>
      )}
      {error && (
        <p className="inline-error" role="alert" data-testid="install-confirm-error">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button
          type="button"
          className="button button-primary"
          disabled={busy}
          onClick={onInstall}
          data-testid="confirm-install"
        >
          {busy ? t("panel.apps.installing") : t("panel.apps.install")}
        </button>
        <button type="button" className="button" disabled={busy} onClick={onCancel} data-testid="cancel-install">
          {t("panel.common.cancel")}
        </button>
      </div>
    </section>
  );
}

/** Client ID → look-up → the permissions it asks, in words → Install or Cancel. Nothing is installed before Install. */
function InstallForm({ onInstalled }: { onInstalled: (message: string) => void }) {
  const { t, errorMessage } = useI18n();
  const gql = useGraphql();
  const input = useRef<HTMLInputElement>(null);
  const [clientId, setClientId] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [found, setFound] = useState<ApplicationToInstall | null>(null);
  const [confirmError, setConfirmError] = useState<string | null>(null);

  const lookUp = (id: string) =>
    gql<{ applicationToInstall: ApplicationToInstall }>(LOOK_UP, { client_id: id }).then(
      (result) => result.applicationToInstall,
    );

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const id = clientId.trim();
    setError(null);
    if (!id) {
      setFieldError(t("panel.apps.enter_client_id"));
      input.current?.focus();
      return;
    }
    setBusy(true);
    setFieldError(null);
    try {
      setConfirmError(null);
      setFound(await lookUp(id));
    } catch (caught) {
      const problem = caught instanceof ApiError ? caught.fieldErrors().client_id : undefined;
      if (problem) {
        setFieldError(problem);
        input.current?.focus();
      } else setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };

  const cancelled = useRef(false);
  useEffect(() => {
    if (!found && cancelled.current) input.current?.focus();
    cancelled.current = false;
  }, [found]);
  const cancel = () => {
    cancelled.current = true;
    setFound(null);
    setConfirmError(null);
  };

  const install = async () => {
    if (!found) return;
    setBusy(true);
    setConfirmError(null);
    try {
      const result = await gql<{ installApplication: { application: { client_id: string; name: string } } }>(INSTALL, {
        client_id: found.client_id,
        permissions: found.permissions.map((permission) => permission.name),
      });
      rememberInstalled(result.installApplication.application.client_id);
      setFound(null);
      setClientId("");
      onInstalled(t("panel.apps.installed_flash", { name: result.installApplication.application.name }));
    } catch (caught) {
      const changed = caught instanceof ApiError ? caught.fieldErrors().permissions : undefined;
      // It asks for more than was shown: show what it asks now, and let the member decide again.
      if (changed) setFound(await lookUp(found.client_id).catch(() => found));
      setConfirmError(changed ?? errorMessage(caught as Error));
    } finally {
      setBusy(false);
    }
  };

  if (found) {
    return (
      <InstallConfirmation application={found} busy={busy} error={confirmError} onInstall={install} onCancel={cancel} />
    );
  }
  return (
    <form className="inline-form" onSubmit={onSubmit} noValidate data-testid="install-form">
      <div className="form-field grow">
        <label htmlFor="install-client-id">{t("panel.apps.client_id")}</label>
        <input
          id="install-client-id"
          name="client_id"
          ref={input}
          value={clientId}
          onChange={(event) => setClientId(event.target.value)}
          placeholder="dnt_app_…"
          autoComplete="off"
          spellCheck={false}
          aria-invalid={fieldError ? true : undefined}
          aria-describedby={fieldError ? "install-client-id-hint install-client-id-error" : "install-client-id-hint"}
        />
        <p className="hint" id="install-client-id-hint">
          {t("panel.apps.client_id_hint")}
        </p>
        {fieldError && (
          <p className="field-error" id="install-client-id-error" data-testid="install-client-id-error">
            {fieldError}
          </p>
        )}
      </div>
      <button type="submit" className="button button-primary" disabled={busy} data-testid="look-up-app">
        {busy ? t("panel.apps.looking_up") : t("panel.apps.look_up")}
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
