import { escapeHtml, htmlDocument } from "../../http/html-page.js";
import type { PublicCampaignWire } from "./giving.schemas.js";

/**
 * The hosted donation page: server-rendered HTML built from the public campaign, with one small
 * inline script that talks to the public checkout API. No framework and no external assets, so
 * the page is fast on a phone and runs under a nonce-only Content-Security-Policy.
 */

const FIELD_LABELS: Record<string, string> = {
  business_name: "Company or organization",
  first_name: "First name",
  last_name: "Last name",
  email: "Email",
  phone: "Phone",
  mobile: "Mobile phone",
  job: "Occupation",
  sex: "Sex",
  date_of_birth: "Date of birth",
  place_of_birth: "Place of birth",
  ssn: "Tax code",
  vat: "VAT number",
  address: "Address",
  address2: "Address line 2",
  city: "City",
  locality: "Region or province",
  country: "Country",
  postal_code: "Postal code",
  note: "Message",
};

const FIELD_AUTOCOMPLETE: Record<string, string> = {
  business_name: "organization",
  first_name: "given-name",
  last_name: "family-name",
  email: "email",
  phone: "tel",
  mobile: "tel",
  job: "organization-title",
  sex: "sex",
  date_of_birth: "bday",
  address: "address-line1",
  address2: "address-line2",
  city: "address-level2",
  locality: "address-level1",
  country: "country-name",
  postal_code: "postal-code",
};

const WIDE_FIELDS = new Set(["business_name", "email", "address", "address2", "note"]);

const MARKETING_CONSENTS = [
  ["email_marketing", "Email"],
  ["phone_marketing", "Phone calls"],
  ["sms_marketing", "SMS"],
  ["postal_marketing", "Post"],
] as const;

/** Whole amounts without decimals ("€25"), others with the currency's ("€25.50"). */
export function formatAmount(amount: number, currency: string): string {
  const whole = Number.isInteger(amount) ? { minimumFractionDigits: 0, maximumFractionDigits: 0 } : {};
  return new Intl.NumberFormat("en", { style: "currency", currency, ...whole }).format(amount);
}

/** JSON that is safe inside a <script> element: no "</script>", no HTML-significant characters. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const attribute = (name: string, value: number | string | null | undefined) =>
  value === null || value === undefined ? "" : ` ${name}="${escapeHtml(String(value))}"`;

const idOf = (field: string) => field.replace(/[^a-z0-9]+/gi, "-");

interface AmountRules {
  asks: number[];
  custom: boolean;
  min: number | null;
  max: number | null;
  default: number | null;
}

function amountRules(campaign: PublicCampaignWire, recurring: boolean): AmountRules {
  const asks = recurring ? campaign.asks_subscription : campaign.asks;
  const fallback = recurring ? campaign.default_subscription_amount : campaign.default_amount;
  const custom = recurring ? campaign.allow_custom_subscription_amount : campaign.allow_custom_amount;
  return {
    // A campaign without suggested amounts and without custom ones still accepts its default amount.
    asks: asks.length === 0 && !custom && fallback !== null ? [fallback] : asks,
    custom,
    min: recurring ? campaign.min_subscription_amount : campaign.min_amount,
    max: recurring ? campaign.max_subscription_amount : campaign.max_amount,
    default: fallback,
  };
}

function pageShell(options: { title: string; nonce: string; body: string; script?: string }): string {
  return htmlDocument({
    ...options,
    style: STYLE,
    head: '<link rel="icon" href="data:,">\n',
    body: `<main id="main">\n${options.body}\n</main>`,
    scripts: options.script,
  });
}

function goalSection(campaign: PublicCampaignWire): string {
  if (!campaign.is_goal_enabled || campaign.goal === null || campaign.goal <= 0) return "";
  const { goal, raised, currency } = campaign;
  const percent = Math.floor((raised / goal) * 100);
  const text = `${formatAmount(raised, currency)} raised of ${formatAmount(goal, currency)} goal`;
  return `<section class="goal" aria-labelledby="goal-label">
  <p id="goal-label" class="goal-text"><strong>${escapeHtml(text)}</strong> <span class="muted">(${percent}%)</span></p>
  <progress max="${goal}" value="${Math.min(raised, goal)}" aria-labelledby="goal-label"></progress>
</section>`;
}

function choice(name: string, id: string, value: string, label: string, checked: boolean): string {
  return `<span class="choice"><input type="radio" name="${name}" id="${id}" value="${escapeHtml(value)}"${checked ? " checked" : ""}><label for="${id}">${escapeHtml(label)}</label></span>`;
}

function frequencySection(campaign: PublicCampaignWire, initial: number): string {
  const options: [number, string][] = [];
  if (campaign.has_one_off) options.push([0, "One-off"]);
  if (campaign.has_subscription) options.push([12, "Monthly"], [1, "Yearly"]);
  const choices = options
    .map(([value, label]) => choice("frequency", `frequency-${value}`, String(value), label, value === initial))
    .join("\n    ");
  return `<fieldset class="group" data-field="frequency" aria-describedby="e-frequency">
  <legend>How often?</legend>
  <div class="segmented">
    ${choices}
  </div>
  <p class="field-error" id="e-frequency" hidden></p>
</fieldset>`;
}

function asksGroup(kind: "one_off" | "recurring", rules: AmountRules, currency: string, hidden: boolean): string {
  const asks = rules.asks
    .map((ask) =>
      choice(
        `ask-${kind}`,
        `ask-${kind}-${idOf(String(ask))}`,
        String(ask),
        formatAmount(ask, currency),
        ask === rules.default,
      ),
    )
    .join("\n    ");
  return `<div class="asks" data-asks="${kind}"${hidden ? " hidden" : ""}>
    ${asks}
  </div>`;
}

function amountSection(campaign: PublicCampaignWire, oneOff: AmountRules, recurring: AmountRules, initial: number) {
  const current = initial === 0 ? oneOff : recurring;
  const prefill = current.custom && current.default !== null && !current.asks.includes(current.default);
  const symbol = formatAmount(0, campaign.currency).replace(/[\d.,\s]/g, "") || campaign.currency;
  const costExample =
    campaign.cost_example_amount !== null && campaign.cost_example_label
      ? `<p class="cost-example" id="cost-example" aria-live="polite">${escapeHtml(
          `${formatAmount(campaign.cost_example_amount, campaign.currency)} = ${campaign.cost_example_label}`,
        )}</p>`
      : "";
  return `<fieldset class="group" data-field="amount" aria-describedby="e-amount">
  <legend>Amount <span class="muted">(${escapeHtml(campaign.currency)})</span></legend>
  ${asksGroup("one_off", oneOff, campaign.currency, initial !== 0)}
  ${asksGroup("recurring", recurring, campaign.currency, initial === 0)}
  <div class="custom" id="custom-wrap"${current.custom ? "" : " hidden"}>
    <label for="custom-amount">Other amount</label>
    <div class="money"><span aria-hidden="true">${escapeHtml(symbol)}</span><input type="number" id="custom-amount" name="custom_amount" inputmode="decimal" step="0.01"${attribute("min", current.min ?? 0.01)}${attribute("max", current.max)}${prefill ? attribute("value", current.default) : ""} aria-describedby="custom-hint e-amount"></div>
    <p class="hint" id="custom-hint"></p>
  </div>
  ${costExample}
  <p class="field-error" id="e-amount" hidden></p>
</fieldset>`;
}

function supporterField(field: string, required: boolean): string {
  const id = `f-supporter-${idOf(field)}`;
  const label = FIELD_LABELS[field] ?? field;
  const common = `id="${id}" name="${field}" data-supporter="${field}"${required ? " required" : ""}${attribute("autocomplete", FIELD_AUTOCOMPLETE[field])} aria-describedby="e-${id}"`;
  let control: string;
  if (field === "sex") {
    control = `<select ${common}><option value="">—</option><option value="FEMALE">Female</option><option value="MALE">Male</option></select>`;
  } else if (field === "note") {
    control = `<textarea ${common} rows="3" maxlength="2000"></textarea>`;
  } else {
    const type =
      field === "email"
        ? "email"
        : field === "phone" || field === "mobile"
          ? "tel"
          : field === "date_of_birth"
            ? "date"
            : "text";
    control = `<input type="${type}" ${common} maxlength="${field === "email" ? 254 : 200}"${field === "email" ? ' spellcheck="false"' : ""}>`;
  }
  const marker = required ? ` <span class="required" aria-hidden="true">*</span>` : "";
  return `<div class="field${WIDE_FIELDS.has(field) ? " wide" : ""}" data-field="supporter.${field}">
      <label for="${id}">${escapeHtml(label)}${marker}</label>
      ${control}
      <p class="field-error" id="e-${id}" hidden></p>
    </div>`;
}

function supporterSection(campaign: PublicCampaignWire): string {
  const fields = campaign.shown_fields
    .filter((field) => field in FIELD_LABELS)
    .map((field) => supporterField(field, campaign.required_fields.includes(field)))
    .join("\n    ");
  return `<fieldset class="group">
  <legend>Your details</legend>
  <p class="muted small">Fields marked <span class="required">*</span> are required.</p>
  <div class="fields">
    ${fields}
  </div>
</fieldset>`;
}

function consentSection(campaign: PublicCampaignWire): string {
  const note = campaign.privacy_note
    ? `<p class="privacy-note" id="privacy-note">${escapeHtml(campaign.privacy_note)}</p>`
    : "";
  const describedBy = campaign.privacy_note ? "privacy-note e-consent-privacy" : "e-consent-privacy";
  const marketing = MARKETING_CONSENTS.map(
    ([name, label]) =>
      `<label class="check"><input type="checkbox" name="${name}" data-consent="${name}"> ${escapeHtml(label)}</label>`,
  ).join("\n      ");
  return `<fieldset class="group">
  <legend>Privacy</legend>
  ${note}
  <div class="field" data-field="consents.privacy">
    <label class="check"><input type="checkbox" id="consent-privacy" name="privacy" data-consent="privacy" required aria-describedby="${describedBy}"> I have read the privacy notice and agree to it <span class="required" aria-hidden="true">*</span></label>
    <p class="field-error" id="e-consent-privacy" hidden></p>
  </div>
  <fieldset class="nested">
    <legend>${escapeHtml(campaign.organization.name)} may keep me informed by</legend>
    <div class="checks">
      ${marketing}
    </div>
  </fieldset>
  <label class="check"><input type="checkbox" name="profilation_marketing" data-consent="profilation_marketing"> I agree that my gifts may be analysed to tailor what I am sent</label>
</fieldset>`;
}

function paymentSection(campaign: PublicCampaignWire, initial: number): string {
  const known = campaign.processors.filter((processor) => processor.name === "sandbox" || processor.name === "manual");
  const usable = known.filter((processor) => (initial === 0 ? processor.one_off : processor.recurring));
  const first = usable[0]?.name;
  const choices = known
    .map((processor) => {
      const label = processor.name === "sandbox" ? "Card" : processor.title;
      return choice("processor", `processor-${processor.name}`, processor.name, label, processor.name === first);
    })
    .join("\n    ");
  const year = new Date().getUTCFullYear();
  return `<fieldset class="group" data-field="processor" aria-describedby="e-processor">
  <legend>Payment</legend>
  <div class="segmented">
    ${choices}
  </div>
  <p class="field-error" id="e-processor" hidden></p>
  <div id="card-fields" class="fields"${first === "sandbox" ? "" : " hidden"}>
    <div class="field wide" data-field="card.number">
      <label for="f-card-number">Card number <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-number" data-card="number" inputmode="numeric" autocomplete="cc-number" maxlength="23" required aria-describedby="card-hint e-f-card-number">
      <p class="field-error" id="e-f-card-number" hidden></p>
    </div>
    <div class="field" data-field="card.exp_month">
      <label for="f-card-exp-month">Expiry month <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-exp-month" data-card="exp_month" inputmode="numeric" autocomplete="cc-exp-month" placeholder="MM" maxlength="2" pattern="0?[1-9]|1[0-2]" required aria-describedby="e-f-card-exp-month">
      <p class="field-error" id="e-f-card-exp-month" hidden></p>
    </div>
    <div class="field" data-field="card.exp_year">
      <label for="f-card-exp-year">Expiry year <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-exp-year" data-card="exp_year" inputmode="numeric" autocomplete="cc-exp-year" placeholder="${year + 2}" maxlength="4" pattern="[0-9]{2}|[0-9]{4}" required aria-describedby="e-f-card-exp-year">
      <p class="field-error" id="e-f-card-exp-year" hidden></p>
    </div>
    <div class="field" data-field="card.cvc">
      <label for="f-card-cvc">Security code (CVC) <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-cvc" data-card="cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4" pattern="[0-9]{3,4}" required aria-describedby="e-f-card-cvc">
      <p class="field-error" id="e-f-card-cvc" hidden></p>
    </div>
    <p class="hint wide" id="card-hint">Test mode, no real money moves: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined, 4000 0000 0000 0341 succeeds now and fails on renewal. Use any future expiry date and any 3 digits as CVC.</p>
  </div>
  <p id="manual-note" class="hint"${first === "manual" ? "" : " hidden"}>You will get the bank transfer details after confirming; your gift counts once the money arrives.</p>
  <p id="manual-one-off" class="hint" hidden>Bank transfer is available for one-off gifts only.</p>
</fieldset>`;
}

function successSection(): string {
  return `<section id="success" class="success" tabindex="-1" aria-labelledby="success-title" hidden>
  <h2 id="success-title">Thank you!</h2>
  <p id="success-summary"></p>
  <div id="transfer" class="transfer" hidden>
    <h3>Bank transfer instructions</h3>
    <p id="transfer-text"></p>
    <dl>
      <dt>Amount</dt><dd id="transfer-amount"></dd>
      <dt>Payee</dt><dd id="transfer-payee"></dd>
      <dt>Reference</dt><dd><code id="transfer-reference"></code></dd>
    </dl>
  </div>
  <p id="receipt" hidden><a id="receipt-link" href="#" rel="noopener">Download your receipt</a></p>
</section>`;
}

/** The donation page of a campaign; `nonce` must be the one in the response's CSP header. */
/** Where the page loads the ALTCHA widget from: our own origin, out of node_modules (donate-page.routes.ts). */
export const CHALLENGE_ASSETS = {
  script: "/donate/assets/altcha.js",
  style: "/donate/assets/altcha.css",
  worker: "/donate/assets/altcha-pbkdf2.worker.js",
} as const;

export function donatePage(campaign: PublicCampaignWire, options: { nonce: string }): string {
  const { nonce } = options;
  const title = `${campaign.title} · ${campaign.organization.name}`;
  const header = `<header>
  <p class="org">${escapeHtml(campaign.organization.name)}</p>
  <h1>${escapeHtml(campaign.title)}</h1>
  ${goalSection(campaign)}
</header>`;
  if (!campaign.has_one_off && !campaign.has_subscription) {
    return pageShell({
      title,
      nonce,
      body: `${header}\n<p class="notice">This campaign is not accepting donations at the moment.</p>`,
    });
  }
  const initial = campaign.has_one_off ? 0 : 12;
  const oneOff = amountRules(campaign, false);
  const recurring = amountRules(campaign, true);
  const config = {
    organization: campaign.organization,
    campaign: campaign.slug,
    currency: campaign.currency,
    amounts: { one_off: oneOff, recurring },
    cost_example:
      campaign.cost_example_amount !== null && campaign.cost_example_label
        ? { amount: campaign.cost_example_amount, label: campaign.cost_example_label }
        : null,
    processors: campaign.processors,
    challenge: { required: campaign.challenge_required, url: campaign.challenge_url, ...CHALLENGE_ASSETS },
  };
  const body = `${header}
<noscript><p class="notice">This donation form needs JavaScript to process your payment securely.</p></noscript>
<form id="donate-form" novalidate aria-describedby="form-error">
<div id="form-error" class="alert" role="alert" tabindex="-1" hidden></div>
${frequencySection(campaign, initial)}
${amountSection(campaign, oneOff, recurring, initial)}
${supporterSection(campaign)}
${consentSection(campaign)}
${paymentSection(campaign, initial)}
<div id="challenge" class="group challenge" data-field="altcha" hidden>
  <p class="hint" id="challenge-hint">To stop automated card testing, your browser solves a short puzzle before the gift is sent. No data leaves this page for it.</p>
  <div id="challenge-widget"></div>
  <p class="field-error" id="e-altcha" hidden></p>
</div>
<button type="submit" id="submit" class="primary">Donate</button>
</form>
${successSection()}`;
  const script = `<script type="application/json" id="donate-config" nonce="${nonce}">${scriptJson(config)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
`;
  return pageShell({ title, nonce, body, script });
}

const ERROR_COPY: Record<number, { title: string; message: string }> = {
  404: {
    title: "Campaign not found",
    message: "We could not find this donation page. Please check the link you followed.",
  },
  410: {
    title: "This campaign has ended",
    message: "Thank you for your interest: this campaign no longer accepts donations.",
  },
  500: {
    title: "Something went wrong",
    message: "The donation page could not be shown right now. Please try again in a moment.",
  },
};

/** A friendly page for an unknown, ended or failing campaign page, in the same look. */
export function donateErrorPage(status: number, options: { nonce: string }): string {
  const copy = ERROR_COPY[status] ?? (ERROR_COPY[500] as { title: string; message: string });
  return pageShell({
    title: copy.title,
    nonce: options.nonce,
    body: `<h1>${escapeHtml(copy.title)}</h1>\n<p>${escapeHtml(copy.message)}</p>`,
  });
}

const STYLE = `
:root { color-scheme: light dark; --accent: #0f766e; --accent-text: #fff; --danger: #b91c1c; --line: color-mix(in srgb, CanvasText 22%, transparent); --soft: color-mix(in srgb, CanvasText 6%, Canvas); }
@media (prefers-color-scheme: dark) { :root { --accent: #2dd4bf; --accent-text: #042f2e; --danger: #f87171; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: Canvas; color: CanvasText; }
main { max-width: 40rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .25rem 0 1rem; }
h2 { font-size: 1.3rem; margin: 0 0 .5rem; } h3 { font-size: 1.05rem; margin: 1rem 0 .25rem; }
.org { margin: 0; font-weight: 600; color: var(--accent); }
.muted { opacity: .75; } .small { font-size: .9rem; margin-top: 0; }
.goal { margin-bottom: 1.25rem; } .goal-text { margin: 0 0 .35rem; }
progress { appearance: none; -webkit-appearance: none; width: 100%; height: .75rem; border: 0; border-radius: 999px; background: var(--soft); overflow: hidden; }
progress::-webkit-progress-bar { background: var(--soft); border-radius: 999px; }
progress::-webkit-progress-value { background: var(--accent); border-radius: 999px; }
progress::-moz-progress-bar { background: var(--accent); border-radius: 999px; }
fieldset.group { border: 1px solid var(--line); border-radius: 12px; padding: 1rem; margin: 0 0 1rem; min-width: 0; }
fieldset.group > legend { font-weight: 700; padding: 0 .35rem; }
fieldset.nested { border: 0; padding: 0; margin: .75rem 0; }
fieldset.nested > legend { font-weight: 600; padding: 0; margin-bottom: .25rem; }
.segmented, .asks { display: grid; gap: .5rem; grid-template-columns: repeat(auto-fit, minmax(6rem, 1fr)); }
.asks + .asks { margin-top: 0; }
.choice { position: relative; display: block; }
.choice input { position: absolute; inset: 0; width: 100%; height: 100%; margin: 0; opacity: 0; cursor: pointer; z-index: 1; }
.choice label { display: block; text-align: center; padding: .7rem .5rem; border: 1px solid var(--line); border-radius: 10px; font-weight: 600; }
.choice input:checked + label { background: var(--accent); border-color: var(--accent); color: var(--accent-text); }
.choice input:disabled + label { opacity: .4; }
.choice input:focus-visible + label { outline: 3px solid var(--accent); outline-offset: 2px; }
.custom { margin-top: .75rem; }
.money { display: flex; align-items: center; border: 1px solid var(--line); border-radius: 8px; padding-left: .7rem; }
.money:has([aria-invalid=true]) { border-color: var(--danger); }
.money:focus-within { outline: 3px solid var(--accent); outline-offset: 2px; }
.cost-example { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 8px; background: var(--soft); }
.fields { display: grid; gap: .25rem 1rem; grid-template-columns: 1fr; }
@media (min-width: 34rem) { .fields { grid-template-columns: 1fr 1fr; } .fields .wide { grid-column: 1 / -1; } }
.field { margin: .35rem 0; min-width: 0; }
label { display: block; font-weight: 600; margin-bottom: .2rem; }
label.check { display: flex; gap: .5rem; align-items: flex-start; font-weight: 400; margin: .4rem 0; }
label.check input { width: 1.2rem; height: 1.2rem; margin: .15rem 0 0; flex: none; }
.checks { display: grid; gap: 0 1rem; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); }
input[type=text], input[type=email], input[type=tel], input[type=date], input[type=number], select, textarea {
  width: 100%; padding: .6rem .7rem; font: inherit; color: inherit; background: Canvas; border: 1px solid var(--line); border-radius: 8px; }
input:focus-visible, select:focus-visible, textarea:focus-visible, button:focus-visible, a:focus-visible, .alert:focus-visible, .success:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.money input[type=number] { border: 0; outline: none; background: transparent; padding-left: .35rem; }
[aria-invalid=true] { border-color: var(--danger); }
.required { color: var(--danger); }
.hint { font-size: .9rem; opacity: .8; margin: .35rem 0 0; }
.field-error { color: var(--danger); font-size: .9rem; font-weight: 600; margin: .25rem 0 0; }
.alert { border: 1px solid var(--danger); background: color-mix(in srgb, var(--danger) 12%, Canvas); border-radius: 10px; padding: .75rem 1rem; margin: 0 0 1rem; }
.privacy-note { font-size: .95rem; margin-top: 0; }
button.primary { display: block; width: 100%; font: inherit; font-size: 1.1rem; font-weight: 700; padding: .85rem 1rem; border-radius: 10px; border: 0; cursor: pointer; background: var(--accent); color: var(--accent-text); }
button.primary[disabled] { opacity: .6; cursor: progress; }
.challenge { border: 1px solid var(--line); border-radius: 12px; padding: 1rem; margin: 0 0 1rem; }
.notice { padding: .75rem 1rem; border-radius: 10px; background: var(--soft); }
.success { border: 1px solid var(--accent); border-radius: 12px; padding: 1.25rem; }
.transfer dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .5rem 0; }
.transfer dt { font-weight: 600; } .transfer dd { margin: 0; overflow-wrap: anywhere; }
a { color: var(--accent); font-weight: 600; }
@media (prefers-reduced-motion: no-preference) { .choice label, button.primary { transition: background-color .15s, border-color .15s; } }
`;

/*
 * The page's behaviour, kept small and framework-free. The first chosen amount opens a checkout
 * (its id and client secret stay in memory only); each submission completes it with a fresh
 * Idempotency-Key, except a retry of the very same submission after a network failure or a 5xx
 * (a processor timeout), which reuses its key so the server can never charge twice.
 */
const SCRIPT = String.raw`
(() => {
  "use strict";
  const config = JSON.parse(document.getElementById("donate-config").textContent);
  const form = document.getElementById("donate-form");
  const byId = (id) => document.getElementById(id);
  const api = "/api/v1/public/organizations/" + encodeURIComponent(config.organization.slug);
  const formatters = {};
  const money = (amount) => {
    const key = Number.isInteger(amount) ? "whole" : "cents";
    if (!formatters[key]) {
      const digits = key === "whole" ? { minimumFractionDigits: 0, maximumFractionDigits: 0 } : {};
      formatters[key] = new Intl.NumberFormat("en", Object.assign({ style: "currency", currency: config.currency }, digits));
    }
    return formatters[key].format(amount);
  };
  const cents = (amount) => Math.round(amount * 100);
  const FREQUENCY_WORDS = { 0: "", 12: " monthly", 1: " yearly" };

  let checkout = null;
  let starting = null;
  let challengeLoad = null;
  let challengeWidget = null;
  let challengePayload = null;
  let failedAttempt = null;
  let busy = false;

  const frequency = () => {
    const checked = form.querySelector("input[name=frequency]:checked");
    return checked ? Number(checked.value) : 0;
  };
  const rules = () => config.amounts[frequency() === 0 ? "one_off" : "recurring"];
  const asksGroup = () => form.querySelector("[data-asks=" + (frequency() === 0 ? "one_off" : "recurring") + "]");
  const customInput = byId("custom-amount");
  const processor = () => {
    const checked = form.querySelector("input[name=processor]:checked");
    return checked ? checked.value : null;
  };

  function amount() {
    const ask = asksGroup().querySelector("input:checked");
    if (ask) return Number(ask.value);
    if (rules().custom && customInput.value.trim() !== "") {
      const value = Number(customInput.value);
      return Number.isFinite(value) ? value : NaN;
    }
    return null;
  }

  function amountProblem(value) {
    const r = rules();
    if (value === null) return "Choose an amount";
    if (!Number.isFinite(value) || value <= 0) return "Enter an amount, for example 25";
    if (Math.abs(value * 100 - Math.round(value * 100)) > 1e-6) return "Use at most 2 decimals";
    if (r.min !== null && cents(value) < cents(r.min)) return "The smallest gift is " + money(r.min);
    if (r.max !== null && cents(value) > cents(r.max)) return "The largest gift is " + money(r.max);
    return null;
  }

  function refresh() {
    const value = amount();
    const valid = value !== null && amountProblem(value) === null;
    const button = byId("submit");
    if (!busy) button.textContent = valid ? "Donate " + money(value) + FREQUENCY_WORDS[frequency()] : "Donate";
    const example = byId("cost-example");
    if (example && config.cost_example) {
      const unit = config.cost_example.amount;
      const label = config.cost_example.label;
      const quantity = valid ? Math.floor(cents(value) / cents(unit)) : 0;
      // "€10 = one school kit", and for more than one "€25 = 2 × school kit".
      example.textContent =
        quantity >= 2
          ? money(value) + " = " + quantity + " × " + label.replace(/^(one|a|an) /i, "")
          : money(quantity === 1 ? value : unit) + " = " + label;
    }
  }

  function applyFrequency() {
    const recurring = frequency() !== 0;
    const r = rules();
    for (const group of form.querySelectorAll("[data-asks]")) {
      group.hidden = group.getAttribute("data-asks") !== (recurring ? "recurring" : "one_off");
    }
    byId("custom-wrap").hidden = !r.custom;
    if (!r.custom) customInput.value = "";
    else if (customInput.value.trim() !== "") for (const ask of asksGroup().querySelectorAll("input")) ask.checked = false;
    customInput.min = r.min === null ? "0.01" : String(r.min);
    if (r.max === null) customInput.removeAttribute("max");
    else customInput.max = String(r.max);
    const range = [r.min !== null ? "from " + money(r.min) : "", r.max !== null ? "up to " + money(r.max) : ""];
    byId("custom-hint").textContent = range.filter(Boolean).join(" ");
    for (const p of config.processors) {
      const radio = byId("processor-" + p.name);
      if (!radio) continue;
      radio.disabled = recurring ? !p.recurring : !p.one_off;
      if (radio.disabled && radio.checked) {
        radio.checked = false;
        const other = form.querySelector("input[name=processor]:not(:disabled)");
        if (other) other.checked = true;
      }
    }
    byId("manual-one-off").hidden = !(recurring && byId("processor-manual"));
    applyProcessor();
    refresh();
  }

  function applyProcessor() {
    const card = processor() === "sandbox";
    byId("card-fields").hidden = !card;
    for (const input of byId("card-fields").querySelectorAll("input")) input.disabled = !card;
    byId("manual-note").hidden = processor() !== "manual";
  }

  function clearErrors() {
    byId("form-error").hidden = true;
    byId("form-error").textContent = "";
    for (const p of form.querySelectorAll(".field-error")) {
      p.hidden = true;
      p.textContent = "";
    }
    for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  }

  /** Shows a message under the input (or group) of an API field name such as "supporter.email". */
  function fieldError(field, message) {
    const name = field && field.indexOf("card") === 0 && !form.querySelector('[data-field="' + field + '"]') ? "card.number" : field;
    const holder = name && form.querySelector('[data-field="' + name + '"]');
    if (!holder) return null;
    const slot = holder.querySelector(".field-error");
    slot.textContent = message;
    slot.hidden = false;
    const control = holder.querySelector("input:not([type=radio]), select, textarea") || holder.querySelector("input:not(:disabled)");
    if (control) control.setAttribute("aria-invalid", "true");
    return control;
  }

  function showAlert(message) {
    const box = byId("form-error");
    box.textContent = message;
    box.hidden = false;
    box.focus();
  }

  function showProblem(problem, fallback) {
    let first = null;
    for (const issue of (problem && problem.errors) || []) {
      const control = fieldError(issue.field || issue.parameter, sentence(issue.message));
      first = first || control;
    }
    showAlert((problem && problem.detail) || fallback);
    if (first) first.focus();
  }

  const sentence = (text) => (text ? text.charAt(0).toUpperCase() + text.slice(1) : "");

  async function post(url, body, headers) {
    const response = await fetch(url, {
      method: "POST",
      headers: Object.assign({ "content-type": "application/json", accept: "application/json" }, headers || {}),
      body: JSON.stringify(body),
      credentials: "omit",
    });
    let json = null;
    try {
      json = await response.json();
    } catch (_) {}
    return { status: response.status, body: json };
  }

  function startCheckout() {
    if (checkout) return Promise.resolve(checkout);
    const value = amount();
    if (starting || value === null || amountProblem(value) !== null) return starting || Promise.resolve(null);
    const url = api + "/campaigns/" + encodeURIComponent(config.campaign) + "/checkouts/";
    starting = post(url, { amount: value, frequency: frequency() })
      .then((response) => {
        if (response.status === 201) {
          checkout = { id: response.body.id, secret: response.body.client_secret };
          return checkout;
        }
        const error = new Error("checkout not started");
        error.problem = response.body;
        throw error;
      })
      .finally(() => {
        starting = null;
      });
    return starting;
  }

  function amountChosen() {
    clearAmountError();
    refresh();
    startCheckout().catch((error) => {
      if (error.problem) showProblem(error.problem, "This amount cannot be chosen.");
    });
  }

  function clearAmountError() {
    const slot = byId("e-amount");
    slot.hidden = true;
    slot.textContent = "";
    customInput.removeAttribute("aria-invalid");
  }

  function newKey() {
    if (crypto.randomUUID) return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-" + hex.slice(12, 16) + "-" + hex.slice(16, 20) + "-" + hex.slice(20);
  }

  function validate() {
    let first = null;
    const problem = amountProblem(amount());
    if (problem) first = fieldError("amount", problem) || customInput;
    for (const control of form.querySelectorAll("input, select, textarea")) {
      if (control.disabled || control.type === "radio" || control === customInput || control.checkValidity()) continue;
      const holder = control.closest("[data-field]");
      const message = control.validity.valueMissing
        ? control.type === "checkbox" ? "Please tick this box to continue" : "Please fill in this field"
        : control.validationMessage;
      if (holder) fieldError(holder.getAttribute("data-field"), message);
      first = first || control;
    }
    if (!processor()) first = first || fieldError("processor", "Choose how to pay");
    return first;
  }

  function submission() {
    const supporter = {};
    for (const control of form.querySelectorAll("[data-supporter]")) {
      const value = control.value.trim();
      if (value !== "") supporter[control.getAttribute("data-supporter")] = value;
    }
    const consents = {};
    for (const box of form.querySelectorAll("[data-consent]")) consents[box.getAttribute("data-consent")] = box.checked;
    const body = { client_secret: checkout.secret, amount: amount(), frequency: frequency(), processor: processor(), supporter, consents };
    if (processor() === "sandbox") {
      const year = byId("f-card-exp-year").value.trim();
      body.card = {
        number: byId("f-card-number").value.replace(/[\s-]/g, ""),
        exp_month: Number(byId("f-card-exp-month").value),
        exp_year: Number(year.length === 2 ? "20" + year : year),
        cvc: byId("f-card-cvc").value.trim(),
      };
    }
    return body;
  }

  function setBusy(value) {
    busy = value;
    const button = byId("submit");
    button.disabled = value;
    form.setAttribute("aria-busy", String(value));
    if (value) button.textContent = "Processing…";
    else refresh();
  }

  function showSuccess(result, body) {
    form.hidden = true;
    const donation = result.donation;
    const pending = result.result === "pending";
    const name = body.supporter.first_name;
    byId("success-title").textContent = pending ? "Almost done" + (name ? ", " + name : "") + "!" : "Thank you" + (name ? ", " + name : "") + "!";
    byId("success-summary").textContent = pending
      ? "Your" + FREQUENCY_WORDS[donation.frequency || 0] + " gift of " + money(donation.amount) + " to " + config.organization.name + " is registered and waiting for your bank transfer."
      : "Your" + FREQUENCY_WORDS[donation.frequency || 0] + " gift of " + money(donation.amount) + " to " + config.organization.name + " was received.";
    if (pending) {
      byId("transfer").hidden = false;
      byId("transfer-text").textContent = "Please transfer the amount below to " + config.organization.name + ", quoting the reference so your gift can be matched. It is confirmed when the money arrives.";
      byId("transfer-amount").textContent = money(donation.amount);
      byId("transfer-payee").textContent = config.organization.name;
      byId("transfer-reference").textContent = donation.code;
    }
    if (typeof result.receipt_url === "string" && /^https?:\/\//.test(result.receipt_url)) {
      byId("receipt-link").href = result.receipt_url;
      byId("receipt").hidden = false;
    }
    const success = byId("success");
    success.hidden = false;
    success.focus();
  }

  async function submit(event) {
    event.preventDefault();
    if (busy) return;
    clearErrors();
    const invalid = validate();
    if (invalid) {
      showAlert("Please check the highlighted fields.");
      invalid.focus();
      return;
    }
    setBusy(true);
    try {
      const started = await startCheckout().catch((error) => {
        showProblem(error.problem, "The donation could not be started. Please try again.");
        return undefined;
      });
      if (started === undefined) return;
      if (!started) return showAlert("Please choose an amount.");
      const body = submission();
      if (challengeLoad) {
        byId("submit").textContent = "Checking your browser…";
        const solved = await challengeSolution().catch(() => null);
        if (!solved) return showAlert("The security check did not finish. Please reload the page and try again.");
        body.altcha = solved;
      }
      const text = JSON.stringify(body);
      const key = failedAttempt && failedAttempt.text === text ? failedAttempt.key : newKey();
      let response;
      try {
        response = await post(api + "/checkouts/" + encodeURIComponent(checkout.id) + "/complete", body, { "Idempotency-Key": key });
      } catch (_) {
        failedAttempt = { key, text };
        return showAlert("We could not reach the server. Check your connection and try again: you will not be charged twice.");
      }
      // After a 5xx the payment may have gone through (a processor timeout): the same submission keeps its key.
      failedAttempt = response.status >= 500 ? { key, text } : null;
      if (body.altcha) renewChallenge();
      if (response.status === 200) return showSuccess(response.body, body);
      const problem = response.body || {};
      if (response.status === 403 && /^challenge_/.test(problem.code || "")) {
        loadChallenge().catch(() => {});
        return showAlert("This form now asks your browser for a short security check. Please wait a moment, then press Donate again.");
      }
      if (response.status === 402) {
        fieldError("card.number", "This card was declined. Try another card or payment method.");
        showAlert((problem.detail || "The payment was declined.") + "");
        return;
      }
      if ((response.status === 404 || response.status === 409) && problem.code !== "payment_in_progress") {
        checkout = null;
        return showAlert((problem.detail ? problem.detail + ". " : "") + "Please press Donate again to start over.");
      }
      if (response.status === 410) {
        byId("submit").hidden = true;
        return showAlert(problem.detail || "This campaign has ended.");
      }
      if (response.status >= 500) return showAlert("Something went wrong on our side. Please try again in a moment.");
      showProblem(problem, "Please check the highlighted fields.");
    } finally {
      setBusy(false);
    }
  }

  /**
   * The proof-of-work challenge (ALTCHA), only while the organization's form is protected: the
   * widget's script, style and worker come from this origin, under this page's nonce.
   */
  function loadChallenge() {
    if (challengeLoad) return challengeLoad;
    byId("challenge").hidden = false;
    const nonce = byId("donate-config").nonce;
    challengeLoad = new Promise((resolve, reject) => {
      const style = document.createElement("link");
      style.rel = "stylesheet";
      style.href = config.challenge.style;
      style.nonce = nonce;
      document.head.appendChild(style);
      const script = document.createElement("script");
      script.type = "module";
      script.src = config.challenge.script;
      script.nonce = nonce;
      script.onerror = () => reject(new Error("challenge script not loaded"));
      script.onload = () => {
        globalThis.$altcha.algorithms.set("PBKDF2/SHA-256", () => new Worker(config.challenge.worker));
        const widget = document.createElement("altcha-widget");
        widget.setAttribute("challenge", config.challenge.url);
        widget.setAttribute("auto", "onload");
        widget.setAttribute("name", "altcha");
        widget.addEventListener("verified", (event) => {
          challengePayload = event.detail && event.detail.payload;
        });
        widget.addEventListener("expired", () => {
          challengePayload = null;
        });
        byId("challenge-widget").appendChild(widget);
        challengeWidget = widget;
        resolve(widget);
      };
      document.head.appendChild(script);
    });
    return challengeLoad;
  }

  /** The solved challenge's payload, waiting for the widget to finish (it solves by itself). */
  async function challengeSolution() {
    await loadChallenge();
    const deadline = Date.now() + 120000;
    while (!challengePayload && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return challengePayload;
  }

  /** A solution is good once: solve a fresh one for the next attempt. */
  function renewChallenge() {
    challengePayload = null;
    if (!challengeWidget) return;
    challengeWidget.reset();
    challengeWidget.verify();
  }

  form.noValidate = true;
  if (config.challenge.required) loadChallenge().catch(() => {});
  for (const radio of form.querySelectorAll("input[name=frequency]")) radio.addEventListener("change", applyFrequency);
  for (const radio of form.querySelectorAll("input[name=processor]")) radio.addEventListener("change", applyProcessor);
  for (const radio of form.querySelectorAll("[data-asks] input")) {
    radio.addEventListener("change", () => {
      customInput.value = "";
      amountChosen();
    });
  }
  customInput.addEventListener("input", () => {
    if (customInput.value.trim() !== "") for (const ask of asksGroup().querySelectorAll("input")) ask.checked = false;
    refresh();
  });
  customInput.addEventListener("change", () => {
    const problem = amountProblem(amount());
    if (problem) fieldError("amount", problem);
    else amountChosen();
  });
  form.addEventListener("submit", submit);
  applyFrequency();
})();
`;
