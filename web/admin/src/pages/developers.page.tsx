import { type FormEvent, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/graphql";
import type { Application, Installation } from "../api/types";
import { useFormat } from "../app/format";
import { appPagePath, rememberInstalled } from "../app/frame-policy";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { CopyButton } from "../components/copy-button";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty, InlineError } from "../components/states";
import { useI18n } from "../i18n";
import { describePermission } from "./apps.page";
import { PERMISSIONS } from "./permissions";

const APPLICATION_FIELDS = "id client_id client_type name application_url callback_urls permissions create_date";
const QUERY = `query Developer {
  applications { ${APPLICATION_FIELDS} }
  installations { id create_date application { ${APPLICATION_FIELDS} } }
}`;
const REGISTER = `mutation Register($name: String!, $application_url: String!, $callback_urls: [String!]!, $permissions: [String!], $client_type: String) {
  registerApplication(name: $name, application_url: $application_url, callback_urls: $callback_urls, permissions: $permissions, client_type: $client_type) {
    client_secret application { ${APPLICATION_FIELDS} }
  }
}`;
const ROTATE = `mutation Rotate($client_id: String!) { rotateApplicationSecret(client_id: $client_id) { client_secret application { client_id name } } }`;
const INSTALL = `mutation Install($client_id: String!) { installApplication(client_id: $client_id) { id } }`;

interface Secret {
  clientId: string;
  name: string;
  /** null: a public client, registered without a secret. */
  secret: string | null;
  rotated: boolean;
}

function SecretPanel({ secret, onDismiss }: { secret: Secret; onDismiss: () => void }) {
  const { t } = useI18n();
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <section
      className="secret-panel card"
      ref={ref}
      tabIndex={-1}
      aria-labelledby="secret-title"
      data-testid="secret-panel"
    >
      <h2 id="secret-title">
        {secret.rotated
          ? t("panel.developers.new_secret_title", { name: secret.name })
          : t("panel.developers.registered_title", { name: secret.name })}
      </h2>
      {secret.secret === null ? (
        <p data-testid="public-client-note">{t("panel.developers.public_note")}</p>
      ) : (
        <p className="warning" role="alert">
          {t("panel.developers.copy_secret_now")}
        </p>
      )}
      <dl className="fields">
        <div className="field">
          <dt>{t("panel.apps.client_id")}</dt>
          <dd className="secret-value">
            <code data-testid="client-id">{secret.clientId}</code> <CopyButton value={secret.clientId} />
          </dd>
        </div>
        {secret.secret !== null && (
          <div className="field">
            <dt>{t("panel.developers.client_secret")}</dt>
            <dd className="secret-value">
              <code data-testid="client-secret">{secret.secret}</code> <CopyButton value={secret.secret} />
            </dd>
          </div>
        )}
      </dl>
      <button type="button" className="button" onClick={onDismiss}>
        {secret.secret === null ? t("panel.common.done") : t("panel.developers.stored_secret")}
      </button>
    </section>
  );
}

function RegisterForm({ onRegistered }: { onRegistered: (application: Application, secret: string | null) => void }) {
  const { t } = useI18n();
  const gql = useGraphql();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const name = String(data.get("name") ?? "").trim();
    const applicationUrl = String(data.get("application_url") ?? "").trim();
    const callbackUrls = String(data.get("callback_urls") ?? "")
      .split(/\s+/)
      .map((url) => url.trim())
      .filter(Boolean);
    const permissions = data.getAll("permissions").map(String);
    const clientType = data.get("public_client") ? "public" : "confidential";
    const local: Record<string, string> = {};
    if (!name) local.name = t("panel.developers.error_name");
    if (!applicationUrl) local.application_url = t("panel.developers.error_url");
    if (callbackUrls.length === 0) local.callback_urls = t("panel.developers.error_callbacks");
    setErrors(local);
    if (Object.keys(local).length > 0) {
      form.querySelector<HTMLElement>("[aria-invalid='true']")?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await gql<{ registerApplication: { client_secret: string | null; application: Application } }>(
        REGISTER,
        { name, application_url: applicationUrl, callback_urls: callbackUrls, permissions, client_type: clientType },
      );
      form.reset();
      onRegistered(result.registerApplication.application, result.registerApplication.client_secret);
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) setErrors(caught.fieldErrors());
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };
  const invalid = (name: string) =>
    errors[name] ? { "aria-invalid": true as const, "aria-describedby": `${name}-error` } : {};
  const fieldError = (name: string) =>
    errors[name] ? (
      <p className="field-error" id={`${name}-error`}>
        {errors[name]}
      </p>
    ) : null;
  return (
    <form onSubmit={onSubmit} noValidate data-testid="register-form">
      <InlineError error={error} />
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="app-name">{t("panel.column.name")}</label>
          <input id="app-name" name="name" {...invalid("name")} />
          {fieldError("name")}
        </div>
        <div className="form-field">
          <label htmlFor="app-url">{t("panel.developers.application_url")}</label>
          <input
            id="app-url"
            name="application_url"
            type="url"
            placeholder="https://app.example.org/donata"
            {...invalid("application_url")}
          />
          <p className="hint">{t("panel.developers.application_url_hint")}</p>
          {fieldError("application_url")}
        </div>
      </div>
      <div className="form-field">
        <label htmlFor="app-callbacks">{t("panel.developers.callback_urls")}</label>
        <textarea
          id="app-callbacks"
          name="callback_urls"
          rows={3}
          placeholder="https://app.example.org/oauth/callback"
          {...invalid("callback_urls")}
        />
        <p className="hint">{t("panel.developers.callback_urls_hint")}</p>
        {fieldError("callback_urls")}
      </div>
      <fieldset className="permissions">
        <legend>{t("panel.apps.permissions")}</legend>
        {fieldError("permissions")}
        <div className="checkbox-grid">
          {PERMISSIONS.map((permission) => (
            <label key={permission} className="checkbox">
              <input type="checkbox" name="permissions" value={permission} />
              <span>
                <code>{permission}</code>
                <span className="muted small block">{describePermission(t, permission)}</span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <label className="checkbox">
        <input type="checkbox" name="public_client" value="public" data-testid="public-client" />
        <span>
          {t("panel.developers.public_client")}
          <span className="muted small block">{t("panel.developers.public_client_hint")}</span>
        </span>
      </label>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="register-app">
          {busy ? t("panel.developers.registering") : t("panel.developers.register")}
        </button>
      </div>
    </form>
  );
}

export function DevelopersPage() {
  const { org, canWrite } = useOrg();
  const { t } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  usePageTitle(t("panel.nav.developers"), org.name);
  const state = useQuery<{ applications: Application[]; installations: Installation[] }>(QUERY);
  const [secret, setSecret] = useState<Secret | null>(null);
  const [flash, setFlash] = useState<string | null>(null);
  const [installError, setInstallError] = useState<Error | null>(null);

  const install = async (application: Application) => {
    setInstallError(null);
    try {
      await gql(INSTALL, { client_id: application.client_id });
      rememberInstalled(application.client_id);
      setFlash(t("panel.developers.installed_in", { name: application.name, organization: org.name }));
      state.reload();
    } catch (caught) {
      setInstallError(caught as Error);
    }
  };

  return (
    <>
      <PageHeader title={t("panel.nav.developers")}>
        <p className="muted">{t("panel.developers.intro")}</p>
      </PageHeader>
      <Flash message={flash} />
      {secret && <SecretPanel secret={secret} onDismiss={() => setSecret(null)} />}
      <Section title={t("panel.developers.your_applications")} id="applications">
        <InlineError error={installError} />
        <Async state={state}>
          {({ applications, installations }) => {
            const installed = new Set(installations.map((installation) => installation.application.client_id));
            if (applications.length === 0) {
              return <Empty>{t("panel.developers.none", { organization: org.name })}</Empty>;
            }
            return (
              <ul className="app-list" data-testid="table-applications">
                {applications.map((application) => (
                  <li key={application.client_id} className="app-item" data-id={application.client_id}>
                    <div className="app-item-head">
                      <h3>{application.name}</h3>
                      <span className="inline-actions">
                        {installed.has(application.client_id) ? (
                          <a className="button button-small" href={appPagePath(org.slug, application.client_id)}>
                            {t("panel.apps.open")}
                          </a>
                        ) : (
                          canWrite && (
                            <button type="button" className="button button-small" onClick={() => install(application)}>
                              {t("panel.developers.install_in", { organization: org.name })}
                            </button>
                          )
                        )}
                        {canWrite && application.client_type !== "public" && (
                          <ActionButton
                            label={t("panel.developers.rotate")}
                            title={t("panel.developers.rotate_title", { name: application.name })}
                            confirmLabel={t("panel.developers.rotate")}
                            danger
                            className="button button-danger-outline button-small"
                            testId={`rotate-${application.client_id}`}
                            run={async () => {
                              const result = await gql<{ rotateApplicationSecret: { client_secret: string } }>(ROTATE, {
                                client_id: application.client_id,
                              });
                              setSecret({
                                clientId: application.client_id,
                                name: application.name,
                                secret: result.rotateApplicationSecret.client_secret,
                                rotated: true,
                              });
                            }}
                          >
                            <p>{t("panel.developers.rotate_body")}</p>
                          </ActionButton>
                        )}
                      </span>
                    </div>
                    <dl className="fields fields-compact">
                      <div className="field">
                        <dt>{t("panel.apps.client_id")}</dt>
                        <dd>
                          <code>{application.client_id}</code> <CopyButton value={application.client_id} />
                        </dd>
                      </div>
                      <div className="field">
                        <dt>{t("panel.developers.client_type")}</dt>
                        <dd>
                          {application.client_type === "public"
                            ? t("panel.developers.client_type_public")
                            : t("panel.developers.client_type_confidential")}
                        </dd>
                      </div>
                      <div className="field">
                        <dt>{t("panel.developers.application_url")}</dt>
                        <dd className="break">{application.application_url}</dd>
                      </div>
                      <div className="field">
                        <dt>{t("panel.developers.callback_urls")}</dt>
                        <dd>
                          <ul className="plain-list">
                            {application.callback_urls.map((url) => (
                              <li key={url} className="break">
                                {url}
                              </li>
                            ))}
                          </ul>
                        </dd>
                      </div>
                      <div className="field">
                        <dt>{t("panel.apps.permissions")}</dt>
                        <dd>
                          {application.permissions.length > 0
                            ? application.permissions.join(", ")
                            : t("panel.developers.no_permissions")}
                        </dd>
                      </div>
                      <div className="field">
                        <dt>{t("panel.developers.registered")}</dt>
                        <dd>{fmt.dateTime(application.create_date)}</dd>
                      </div>
                    </dl>
                  </li>
                ))}
              </ul>
            );
          }}
        </Async>
      </Section>
      {canWrite ? (
        <Section title={t("panel.developers.register_title")} id="register">
          <RegisterForm
            onRegistered={(application, clientSecret) => {
              setSecret({
                clientId: application.client_id,
                name: application.name,
                secret: clientSecret,
                rotated: false,
              });
              state.reload();
            }}
          />
        </Section>
      ) : (
        <p className="notice">{t("panel.developers.read_only", { role: t(`panel.state.${org.role}`) })}</p>
      )}
    </>
  );
}
