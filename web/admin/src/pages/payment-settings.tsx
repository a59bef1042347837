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
const afterDisconnect = (settings: PaymentSettings) =>
  settings.processor === "sandbox"
    ? "Stripe disconnected. Donors pay with the sandbox again (no real money)."
    : "Stripe disconnected. Donors can give by bank transfer only (once the IBAN is set) until a processor is connected.";

const KEY_FIELDS = [
  {
    name: "secret_key",
    label: "Secret key",
    hint: "sk_test_… or sk_live_… from Stripe's dashboard, Developers → API keys (a restricted rk_… key works too). Stored encrypted; never shown again.",
    secret: true,
  },
  {
    name: "publishable_key",
    label: "Publishable key",
    hint: "pk_test_… or pk_live_…, from the same page and the same mode (test or live) as the secret key.",
    secret: false,
  },
  {
    name: "webhook_secret",
    label: "Webhook signing secret",
    hint: "whsec_…, shown on the page of the webhook endpoint you add in Stripe for the URL above. Stored encrypted.",
    secret: true,
  },
] as const;

function StripeKeysForm({ connected, onSaved }: { connected: boolean; onSaved: (message: string) => void }) {
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
      onSaved(`Stripe connected in ${saved.connectStripe.mode} mode. Donors now pay with Stripe.`);
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        setFieldErrors(caught.fieldErrors());
        setError(new Error("The keys were not saved; see the fields below."));
      } else {
        setError(caught as Error);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate data-testid="stripe-keys">
      <h3>{connected ? "Replace the keys" : "Connect Stripe"}</h3>
      <p className="muted">
        The secret key is checked with Stripe before it is saved. Test keys (sk_test_…) let you try the donation page
        with Stripe's test cards; live keys take real money.
      </p>
      <InlineError error={error} />
      <div className="form-grid">
        {KEY_FIELDS.map((field) => {
          const id = `stripe-${field.name}`;
          const problem = fieldErrors[field.name];
          return (
            <div className="form-field" key={field.name}>
              <label htmlFor={id}>{field.label}</label>
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
                {field.hint}
              </p>
            </div>
          );
        })}
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="save-stripe-keys">
          {busy ? "Checking the keys with Stripe…" : connected ? "Replace keys" : "Connect Stripe"}
        </button>
      </div>
    </form>
  );
}

function CurrentProcessor({ settings }: { settings: PaymentSettings }) {
  const format = useFormat();
  if (settings.test_mode) {
    return (
      <p className="notice" data-testid="payment-processor">
        <strong>Test mode (sandbox)</strong>: donors pay with test card numbers, no real money moves, and every page
        shows a test banner. Test gifts are kept apart: out of totals, receipts and statements. Connect Stripe below, or
        switch test mode off, before taking real donations.
      </p>
    );
  }
  if (settings.processor === "none") {
    return (
      <p className="notice" data-testid="payment-processor">
        <strong>No card processor</strong>: online giving by card is not set up. Donors can give by bank transfer once
        the IBAN is entered under Bank transfer; without it the donation page says online giving is not set up yet.
        Connect a Stripe account below, or switch test mode on to try the donation page with test cards.
      </p>
    );
  }
  if (settings.processor === "sandbox") {
    return (
      <p className="notice" data-testid="payment-processor">
        <strong>Sandbox</strong>: card payments are simulated and no real money moves. Connect a Stripe account below to
        take real donations by card, SEPA Direct Debit and wallets.
      </p>
    );
  }
  return (
    <dl className="fields" data-testid="payment-processor">
      <div className="field">
        <dt>Processor</dt>
        <dd>
          Stripe{" "}
          <span className={`badge badge-${settings.mode === "live" ? "good" : "warn"}`} data-testid="payment-mode">
            {settings.mode === "live" ? "Live mode" : "Test mode"}
          </span>
        </dd>
      </div>
      <div className="field">
        <dt>Publishable key</dt>
        <dd>
          <code>{settings.publishable_key}</code>
        </dd>
      </div>
      <div className="field">
        <dt>Secret key</dt>
        <dd>
          <code data-testid="secret-key-last4">…{settings.secret_key_last4}</code>{" "}
          <span className="muted small">(only the last 4 characters are ever shown)</span>
        </dd>
      </div>
      <div className="field">
        <dt>Webhook signing secret</dt>
        <dd>
          <code>…{settings.webhook_secret_last4}</code>
        </dd>
      </div>
      <div className="field">
        <dt>Keys saved</dt>
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
  const gql = useGraphql();
  const enabled = !settings.test_mode;
  return (
    <div data-testid="test-mode-switch">
      <h3>Test mode</h3>
      <p className="muted">
        {settings.test_mode
          ? "Test mode is on: the sandbox takes gifts with test card numbers and every page shows a test banner."
          : "Try the donation page without real money: the sandbox takes gifts with test card numbers, every page shows a test banner, and test gifts stay out of totals, receipts and statements."}
      </p>
      <div className="form-actions">
        <ActionButton
          label={enabled ? "Switch test mode on" : "Switch test mode off"}
          title={enabled ? "Switch test mode on?" : "Switch test mode off?"}
          confirmLabel={enabled ? "Switch on" : "Switch off"}
          danger={enabled && settings.processor === "stripe"}
          testId="toggle-test-mode"
          run={() => gql(SET_TEST_MODE, { enabled })}
          onDone={() =>
            onChanged(
              enabled
                ? "Test mode is on: no real money moves, and every page shows a test banner."
                : "Test mode is off.",
            )
          }
        >
          {enabled ? (
            <p>
              Donors will pay with the sandbox's test cards and no real money moves.
              {settings.processor === "stripe" && " The Stripe keys are deleted; you can connect them again later."}
            </p>
          ) : (
            <p>
              The sandbox stops taking gifts. On a production server donors can then give only by bank transfer (once
              the IBAN is set) until you connect Stripe. Test gifts stay marked as test data.
            </p>
          )}
        </ActionButton>
      </div>
    </div>
  );
}

/** Settings → Payments: who processes card payments (sandbox or the organization's Stripe account) and its history. */
export function PaymentsSection() {
  const { canWrite } = useOrg();
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
    <Section title="Payments" id="payments">
      <Flash message={flash} />
      <Async state={state}>
        {({ paymentSettings: settings }) => {
          return (
            <div className="payments-stack">
              <CurrentProcessor settings={settings} />
              <div>
                <h3>Webhook endpoint</h3>
                <p className="muted">
                  In Stripe's dashboard, Developers → Webhooks, add an endpoint with this URL, select the events below,
                  and paste its signing secret here. Stripe tells Donata through it when a payment succeeds, fails, is
                  refunded or disputed.
                </p>
                <p>
                  <code data-testid="webhook-url">{settings.webhook_url}</code>{" "}
                  <CopyButton value={settings.webhook_url} />
                </p>
                <p className="muted small">Events: {settings.webhook_events.join(", ")}</p>
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
                        label="Disconnect Stripe"
                        title="Disconnect Stripe?"
                        confirmLabel="Disconnect"
                        danger
                        testId="disconnect-stripe"
                        run={async () => {
                          answered.current = (
                            await gql<{ disconnectStripe: PaymentSettings }>(DISCONNECT)
                          ).disconnectStripe;
                        }}
                        onDone={() => answered.current && changed(afterDisconnect(answered.current))}
                      >
                        <p>
                          The keys are deleted: no real money can be given by card until you connect Stripe again.
                          Payments already made with Stripe keep their records.
                        </p>
                      </ActionButton>
                    </div>
                  )}
                  <TestModeSwitch settings={settings} onChanged={changed} />
                </>
              ) : (
                <p className="muted">Only owners and admins can change the payment processor.</p>
              )}
              <div>
                <h3>Change history</h3>
                {canWrite ? (
                  <Async state={history}>
                    {({ auditLog }) =>
                      auditLog.items.length === 0 ? (
                        <p className="muted">No changes yet.</p>
                      ) : (
                        <DataTable
                          testId="table-payment-history"
                          caption="Changes to the payment settings"
                          rows={auditLog.items}
                          columns={[
                            { key: "date", label: "When", render: (row) => format.dateTime(row.create_date) },
                            { key: "actor", label: "Who", render: (row) => row.actor_label },
                            { key: "description", label: "What", render: (row) => row.summary },
                          ]}
                        />
                      )
                    }
                  </Async>
                ) : (
                  <p className="muted">Owners and admins see who changed the settings, in the audit log.</p>
                )}
              </div>
            </div>
          );
        }}
      </Async>
    </Section>
  );
}
