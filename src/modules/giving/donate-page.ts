import { readFileSync } from "node:fs";
import { escapeHtml, htmlDocument } from "../../http/html-page.js";
import { amountDecimals } from "../../payments/money.js";
import { stripeAmountDecimals } from "../../payments/processors/stripe-currencies.js";
import type { PublicCampaignWire } from "./giving.schemas.js";

/** Where Stripe requires Stripe.js to be loaded from (https://docs.stripe.com/js/including). */
export const STRIPE_JS_URL = "https://js.stripe.com/v3/";

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

function pageShell(options: { title: string; nonce: string; body: string; script?: string; head?: string }): string {
  return htmlDocument({
    ...options,
    style: STYLE,
    head: `<link rel="icon" href="data:,">\n${options.head ?? ""}`,
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
  ${coverFeeField(campaign)}
</fieldset>`;
}

/** The checkbox's words are set by the script as the amount changes ("Add €1.03 to cover processing fees"). */
function coverFeeField(campaign: PublicCampaignWire): string {
  if (!campaign.cover_fee) return "";
  return `<div class="field cover-fee" data-field="cover_fee">
    <label class="check"><input type="checkbox" id="cover-fee" name="cover_fee"> <span id="cover-fee-label">Add the processing fee to my gift</span></label>
    <p class="field-error" id="e-cover-fee" hidden></p>
  </div>`;
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

const PROCESSOR_LABELS: Record<string, string> = { sandbox: "Card", stripe: "Card or bank debit" };

function paymentSection(campaign: PublicCampaignWire, initial: number): string {
  // Stripe's Payment Element takes the place of the sandbox card fields when the organization has Stripe.
  const online = campaign.stripe ? "stripe" : "sandbox";
  const known = campaign.processors.filter((processor) => processor.name === online || processor.name === "manual");
  const card = known.some((processor) => processor.name === online);
  const usable = known.filter((processor) => (initial === 0 ? processor.one_off : processor.recurring));
  const first = usable[0]?.name;
  const choices = known
    .map((processor) => {
      const label = PROCESSOR_LABELS[processor.name] ?? processor.title;
      return choice("processor", `processor-${processor.name}`, processor.name, label, processor.name === first);
    })
    .join("\n    ");
  return `<fieldset class="group" data-field="processor" aria-describedby="e-processor">
  <legend>Payment</legend>
  <div class="segmented">
    ${choices}
  </div>
  <p class="field-error" id="e-processor" hidden></p>
  ${!card ? "" : campaign.stripe ? stripeFields(first === "stripe") : cardFields(first === "sandbox")}
  <p id="manual-note" class="hint"${first === "manual" ? "" : " hidden"}>You will get the bank transfer details after confirming; your gift counts once the money arrives.</p>
  <p id="manual-one-off" class="hint" hidden>Bank transfer is available for one-off gifts only.</p>
</fieldset>`;
}

/**
 * Where Stripe's Payment Element is mounted (cards, SEPA Direct Debit with its mandate text,
 * Apple Pay / Google Pay where the browser offers them); web/donate/donate.js mounts it.
 */
function stripeFields(shown: boolean): string {
  return `<div id="stripe-fields" class="stripe-fields" data-field="stripe"${shown ? "" : " hidden"}>
    <div id="payment-element" class="payment-element"><p class="hint" id="payment-element-loading">Loading the secure payment form…</p></div>
    <p class="field-error" id="e-stripe" hidden></p>
  </div>`;
}

function cardFields(shown: boolean): string {
  const year = new Date().getUTCFullYear();
  return `<div id="card-fields" class="fields"${shown ? "" : " hidden"}>
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
  </div>`;
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
      <dt>Account holder</dt><dd id="transfer-payee"></dd>
      <dt>IBAN</dt><dd><code id="transfer-iban"></code></dd>
      <dt id="transfer-bic-label">BIC</dt><dd><code id="transfer-bic"></code></dd>
      <dt>Reference</dt><dd><code id="transfer-reference"></code></dd>
    </dl>
  </div>
  <div id="transfer-contact" class="transfer" hidden>
    <h3>Bank transfer</h3>
    <p id="transfer-contact-text"></p>
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

/** Test-mode Stripe keys, or the organization's test mode (the sandbox): nothing is charged, and the donor must know it. */
function testModeBanner(campaign: PublicCampaignWire): string {
  if (campaign.test_mode) {
    return `<p class="test-mode" id="test-mode" role="note" aria-label="Test mode"><strong>Test mode — no real money moves.</strong> Pay with a test card below: nothing is charged, and the gift is kept as test data.</p>\n`;
  }
  if (!campaign.stripe?.test_mode) return "";
  return `<p class="test-mode" id="test-mode" role="note" aria-label="Test mode"><strong>Test mode</strong> — no real money moves. Use Stripe's test cards; nothing is charged.</p>\n`;
}

export function donatePage(campaign: PublicCampaignWire, options: { nonce: string }): string {
  const { nonce } = options;
  const title = `${campaign.title} · ${campaign.organization.name}`;
  const header = `${testModeBanner(campaign)}<header>
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
  // Production without a processor: no card form (never the sandbox's), and no bank transfer without an IBAN.
  if (campaign.processors.length === 0) {
    return pageShell({
      title,
      nonce,
      body: `${header}\n<div class="notice" id="not-set-up"><h2>Online giving is not set up yet</h2>
<p>${escapeHtml(campaign.organization.name)} does not take donations on this page yet. Please come back later, or get in touch with ${escapeHtml(campaign.organization.name)} to give.</p></div>`,
    });
  }
  const initial = campaign.has_one_off ? 0 : 12;
  const oneOff = amountRules(campaign, false);
  const recurring = amountRules(campaign, true);
  const config = {
    organization: campaign.organization,
    campaign: campaign.slug,
    currency: campaign.currency,
    // Decimals an amount may have (0 for JPY) and, with Stripe, the decimals of Stripe.js's amounts (0 for JPY, 3 for KWD).
    amount_decimals: amountDecimals(campaign.currency),
    amounts: { one_off: oneOff, recurring },
    cost_example:
      campaign.cost_example_amount !== null && campaign.cost_example_label
        ? { amount: campaign.cost_example_amount, label: campaign.cost_example_label }
        : null,
    processors: campaign.processors,
    cover_fee: campaign.cover_fee,
    stripe: campaign.stripe ? { ...campaign.stripe, amount_decimals: stripeAmountDecimals(campaign.currency) } : null,
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
  // Stripe.js straight from Stripe, as Stripe requires (never bundled or self-hosted); async, the script waits for it.
  const head = campaign.stripe
    ? `<script src="${STRIPE_JS_URL}" id="stripe-js" nonce="${nonce}" async></script>\n`
    : undefined;
  return pageShell({ title, nonce, body, script, head });
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

// The page's own stylesheet and script (web/donate/), read once and inlined under the response's nonce.
const asset = (file: string) => readFileSync(new URL(`../../../web/donate/${file}`, import.meta.url), "utf8");
const STYLE = asset("donate.css");
const SCRIPT = asset("donate.js");
