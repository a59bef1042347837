import { type FormEvent, useRef, useState } from "react";
import { ApiError } from "../api/graphql";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { usePaymentMode } from "../app/payment-mode";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { CopyButton } from "../components/copy-button";
import { DataTable } from "../components/data-table";
import { Section } from "../components/page";
import { Async, InlineError } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import { AUDIT_FIELDS, type AuditEntry } from "./audit-log.page";

interface PaymentSettings {
  processor: "stripe" | "sandbox" | "none";
  test_mode: boolean;
  mode: "test" | "live" | null;
  publishable_key: string | null;
  secret_key_last4: string | null;
  webhook_secret_last4: string | null;
  webhook_url: string;
  webhook_events: string[];
  update_date: string | null;
}

const SETTINGS_FIELDS =
  "processor test_mode mode publishable_key secret_key_last4 webhook_secret_last4 webhook_url webhook_events update_date";
const PAYMENTS = `query PaymentSettings { paymentSettings { ${SETTINGS_FIELDS} } }`;
const HISTORY = `query PaymentSettingsHistory { auditLog(type: ["payment_settings.updated"], first: 20) { items { ${AUDIT_FIELDS} } } }`;
const CONNECT = `mutation ConnectStripe($input: ConnectStripeInput!) { connectStripe(input: $input) { ${SETTINGS_FIELDS} } }`;
const DISCONNECT = `mutation DisconnectStripe { disconnectStripe { ${SETTINGS_FIELDS} } }`;
const SET_TEST_MODE = `mutation SetPaymentTestMode($enabled: Boolean!) { setPaymentTestMode(enabled: $enabled) { ${SETTINGS_FIELDS} } }`;

/** What donors can pay with once Stripe is disconnected, as the server answered. */
const afterDisconnect = (settings: PaymentSettings, t: Translate) =>
  settings.processor === "sandbox"
    ? t("panel.payment_settings.disconnected_sandbox")
    : t("panel.payment_settings.disconnected_none");

/** `label` and `hint` are keys of the catalog. */
const KEY_FIELDS = [
  {
    name: "secret_key",
    label: "panel.payment_settings.secret_key",
    hint: "panel.payment_settings.secret_key_hint",
    secret: true,
  },
  {
    name: "publishable_key",
    label: "panel.payment_settings.publishable_key",
    hint: "panel.payment_settings.publishable_key_hint",
    secret: false,
  },
  {
    name: "webhook_secret",
    label: "panel.payment_settings.webhook_secret",
    hint: "panel.payment_settings.webhook_secret_hint",
    secret: true,
  },
] as const;

function StripeKeysForm({ connected, onSaved }: { connected: boolean; onSaved: (message: string) => void }) {
  const { t } = useI18n();
  const gql = useGraphql();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setBusy(true);
    setError(null);
    setFieldErrors({});
    try {
      const input = Object.fromEntries(KEY_FIELDS.map((field) => [field.name, String(data.get(field.name) ?? "")]));
      const saved = await gql<{ connectStripe: PaymentSettings }>(CONNECT, { input });
      form.reset();
      onSaved(
        saved.connectStripe.mode === "live"
          ? t("panel.payment_settings.connected_live")
          : t("panel.payment_settings.connected_test"),
      );
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        setFieldErrors(caught.fieldErrors());
        setError(new Error(t("panel.payment_settings.keys_not_saved")));
      } else {
        setError(caught as Error);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate data-testid="stripe-keys">
      <h3>{connected ? t("panel.payment_settings.replace_title") : t("panel.payment_settings.connect")}</h3>
      <p className="muted">{t("panel.payment_settings.keys_intro")}</p>
      <InlineError error={error} />
      <div className="form-grid">
        {KEY_FIELDS.map((field) => {
          const id = `stripe-${field.name}`;
          const problem = fieldErrors[field.name];
          return (
            <div className="form-field" key={field.name}>
              <label htmlFor={id}>{t(field.label)}</label>
              <input
                id={id}
                name={field.name}
                type={field.secret ? "password" : "text"}
                autoComplete="off"
                spellCheck={false}
                aria-invalid={problem ? true : undefined}
                aria-describedby={problem ? `${id}-error` : `${id}-hint`}
              />
              {problem && (
                <p className="field-error" id={`${id}-error`} data-field-error={field.name}>
                  {problem}
                </p>
              )}
              <p className="hint" id={`${id}-hint`}>
                {t(field.hint)}
              </p>
            </div>
          );
        })}
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="save-stripe-keys">
          {busy
            ? t("panel.payment_settings.checking")
            : connected
              ? t("panel.payment_settings.replace")
              : t("panel.payment_settings.connect")}
        </button>
      </div>
    </form>
  );
}

function CurrentProcessor({ settings }: { settings: PaymentSettings }) {
  const { t, rich } = useI18n();
  const format = useFormat();
  const strong = (chunks: React.ReactNode) => <strong>{chunks}</strong>;
  if (settings.test_mode) {
    return (
      <p className="notice" data-testid="payment-processor">
        {rich("panel.payment_settings.processor_test_mode", { strong })}
      </p>
    );
  }
  if (settings.processor === "none") {
    return (
      <p className="notice" data-testid="payment-processor">
        {rich("panel.payment_settings.processor_none", { strong })}
      </p>
    );
  }
  if (settings.processor === "sandbox") {
    return (
      <p className="notice" data-testid="payment-processor">
        {rich("panel.payment_settings.processor_sandbox", { strong })}
      </p>
    );
  }
  return (
    <dl className="fields" data-testid="payment-processor">
      <div className="field">
        <dt>{t("panel.payment_settings.processor")}</dt>
        <dd>
          Stripe{" "}
          <span className={`badge badge-${settings.mode === "live" ? "good" : "warn"}`} data-testid="payment-mode">
            {settings.mode === "live" ? t("panel.payment_settings.live_mode") : t("panel.payment_settings.test_mode")}
          </span>
        </dd>
      </div>
      <div className="field">
        <dt>{t("panel.payment_settings.publishable_key")}</dt>
        <dd>
          <code>{settings.publishable_key}</code>
        </dd>
      </div>
      <div className="field">
        <dt>{t("panel.payment_settings.secret_key")}</dt>
        <dd>
          <code data-testid="secret-key-last4">…{settings.secret_key_last4}</code>{" "}
          <span className="muted small">{t("panel.payment_settings.last4_only")}</span>
        </dd>
      </div>
      <div className="field">
        <dt>{t("panel.payment_settings.webhook_secret")}</dt>
        <dd>
          <code>…{settings.webhook_secret_last4}</code>
        </dd>
      </div>
      <div className="field">
        <dt>{t("panel.payment_settings.keys_saved")}</dt>
        <dd>{format.dateTime(settings.update_date)}</dd>
      </div>
    </dl>
  );
}

/**
 * Test mode: the explicit way to try the donation page (also in production), with the sandbox's test
 * cards; its gifts are test data. Switching it on deletes Stripe keys, so it asks first.
 */
function TestModeSwitch({ settings, onChanged }: { settings: PaymentSettings; onChanged: (message: string) => void }) {
  const { t } = useI18n();
  const gql = useGraphql();
  const enabled = !settings.test_mode;
  return (
    <div data-testid="test-mode-switch">
      <h3>{t("panel.payment_settings.test_mode")}</h3>
      <p className="muted">
        {settings.test_mode
          ? t("panel.payment_settings.test_mode_on_intro")
          : t("panel.payment_settings.test_mode_off_intro")}
      </p>
      <div className="form-actions">
        <ActionButton
          label={enabled ? t("panel.payment_settings.switch_on_label") : t("panel.payment_settings.switch_off_label")}
          title={enabled ? t("panel.payment_settings.switch_on_title") : t("panel.payment_settings.switch_off_title")}
          confirmLabel={enabled ? t("panel.payment_settings.switch_on") : t("panel.payment_settings.switch_off")}
          danger={enabled && settings.processor === "stripe"}
          testId="toggle-test-mode"
          run={() => gql(SET_TEST_MODE, { enabled })}
          onDone={() =>
            onChanged(
              enabled ? t("panel.payment_settings.test_mode_is_on") : t("panel.payment_settings.test_mode_is_off"),
            )
          }
        >
          {enabled ? (
            <p>
              {t("panel.payment_settings.switch_on_body")}
              {settings.processor === "stripe" && ` ${t("panel.payment_settings.switch_on_body_stripe")}`}
            </p>
          ) : (
            <p>{t("panel.payment_settings.switch_off_body")}</p>
          )}
        </ActionButton>
      </div>
    </div>
  );
}

/** Settings → Payments: who processes card payments (sandbox or the organization's Stripe account) and its history. */
export function PaymentsSection() {
  const { canWrite } = useOrg();
  const { t } = useI18n();
  const format = useFormat();
  const gql = useGraphql();
  const paymentMode = usePaymentMode();
  const state = useQuery<{ paymentSettings: PaymentSettings }>(PAYMENTS);
  const history = useQuery<{ auditLog: { items: AuditEntry[] } }>(HISTORY, {}, !canWrite);
  const [flash, setFlash] = useState<string | null>(null);
  const answered = useRef<PaymentSettings | null>(null);
  const changed = (message: string) => {
    setFlash(message);
    state.reload();
    history.reload();
    paymentMode.reload();
  };
  return (
    <Section title={t("panel.payments.title")} id="payments">
      <Flash message={flash} />
      <Async state={state}>
        {({ paymentSettings: settings }) => {
          return (
            <div className="payments-stack">
              <CurrentProcessor settings={settings} />
              <div>
                <h3>{t("panel.payment_settings.webhook_endpoint")}</h3>
                <p className="muted">{t("panel.payment_settings.webhook_intro")}</p>
                <p>
                  <code data-testid="webhook-url">{settings.webhook_url}</code>{" "}
                  <CopyButton value={settings.webhook_url} />
                </p>
                <p className="muted small">
                  {t("panel.payment_settings.events", { events: settings.webhook_events.join(", ") })}
                </p>
              </div>
              {canWrite ? (
                <>
                  <StripeKeysForm
                    key={settings.update_date ?? "none"}
                    connected={settings.processor === "stripe"}
                    onSaved={changed}
                  />
                  {settings.processor === "stripe" && (
                    <div className="form-actions">
                      <ActionButton
                        label={t("panel.payment_settings.disconnect_label")}
                        title={t("panel.payment_settings.disconnect_title")}
                        confirmLabel={t("panel.payment_settings.disconnect")}
                        danger
                        testId="disconnect-stripe"
                        run={async () => {
                          answered.current = (
                            await gql<{ disconnectStripe: PaymentSettings }>(DISCONNECT)
                          ).disconnectStripe;
                        }}
                        onDone={() => answered.current && changed(afterDisconnect(answered.current, t))}
                      >
                        <p>{t("panel.payment_settings.disconnect_body")}</p>
                      </ActionButton>
                    </div>
                  )}
                  <TestModeSwitch settings={settings} onChanged={changed} />
                </>
              ) : (
                <p className="muted">{t("panel.payment_settings.read_only")}</p>
              )}
              <div>
                <h3>{t("panel.payment_settings.history")}</h3>
                {canWrite ? (
                  <Async state={history}>
                    {({ auditLog }) =>
                      auditLog.items.length === 0 ? (
                        <p className="muted">{t("panel.payment_settings.no_changes")}</p>
                      ) : (
                        <DataTable
                          testId="table-payment-history"
                          caption={t("panel.payment_settings.history_caption")}
                          rows={auditLog.items}
                          columns={[
                            {
                              key: "date",
                              label: t("panel.audit.when"),
                              render: (row) => format.dateTime(row.create_date),
                            },
                            { key: "actor", label: t("panel.audit.who"), render: (row) => row.actor_label },
                            { key: "description", label: t("panel.audit.what"), render: (row) => row.summary },
                          ]}
                        />
                      )
                    }
                  </Async>
                ) : (
                  <p className="muted">{t("panel.payment_settings.history_hidden")}</p>
                )}
              </div>
            </div>
          );
        }}
      </Async>
    </Section>
  );
}
