import { readFileSync } from "node:fs";
import { escapeHtml, htmlDocument, languageSwitcher } from "../../http/html-page.js";
import type { Locale } from "../../i18n/locales.js";
import { messagesUnder, t } from "../../i18n/messages.js";
import { imagePath, PURPOSES, parseImageUrl } from "../../images/images.service.js";
import { amountDecimals, toCents } from "../../payments/money.js";
import { stripeAmountDecimals } from "../../payments/processors/stripe-currencies.js";
import { SUPPORTER_FORM_FIELDS } from "../campaigns/campaigns.schemas.js";
import { renderStory } from "../campaigns/story.js";
import type { PublicCampaignWire } from "./giving.schemas.js";

/** Where Stripe requires Stripe.js to be loaded from (https://docs.stripe.com/js/including). */
export const STRIPE_JS_URL = "https://js.stripe.com/v3/";

/**
 * The hosted donation page: server-rendered HTML built from the public campaign, with one small
 * inline script that talks to the public checkout API. No framework and no external assets, so
 * the page is fast on a phone and runs under a nonce-only Content-Security-Policy.
 */

/** The supporter fields the page can show; their labels are `donate.fields.<field>` in the catalog. */
const SUPPORTER_FIELDS = new Set<string>(SUPPORTER_FORM_FIELDS);

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
  ["email_marketing", "donate.marketing.email"],
  ["phone_marketing", "donate.marketing.phone"],
  ["sms_marketing", "donate.marketing.sms"],
  ["postal_marketing", "donate.marketing.postal"],
] as const;

/** Whole amounts without decimals ("€25"), others with the currency's ("€25.50"). */
export function formatAmount(amount: number, currency: string, locale: Locale = "en"): string {
  const whole = Number.isInteger(amount) ? { minimumFractionDigits: 0, maximumFractionDigits: 0 } : {};
  return new Intl.NumberFormat(locale, { style: "currency", currency, ...whole }).format(amount);
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

/** A message of the catalog, escaped for HTML. */
const w = (locale: Locale, key: string, values?: Record<string, string | number>) => escapeHtml(t(locale, key, values));

function pageShell(options: {
  title: string;
  nonce: string;
  body: string;
  locale: Locale;
  /** The page's own path, for the language switcher's links (none on error pages). */
  path?: string;
  script?: string;
  head?: string;
}): string {
  const switcher = options.path ? languageSwitcher(options.locale, options.path) : "";
  return htmlDocument({
    ...options,
    lang: options.locale,
    style: STYLE,
    head: `<link rel="icon" href="data:,">\n${options.head ?? ""}`,
    body: `<main id="main">\n${options.body}\n</main>\n${switcher}`,
    scripts: options.script,
  });
}

function goalSection(campaign: PublicCampaignWire, locale: Locale): string {
  if (!campaign.is_goal_enabled || campaign.goal === null || campaign.goal <= 0) return "";
  const { goal, raised, currency } = campaign;
  const percent = Math.floor((raised / goal) * 100);
  const text = t(locale, "donate.goal", {
    raised: formatAmount(raised, currency, locale),
    goal: formatAmount(goal, currency, locale),
  });
  return `<section class="goal" aria-labelledby="goal-label">
  <p id="goal-label" class="goal-text"><strong>${escapeHtml(text)}</strong> <span class="muted">(${percent}%)</span></p>
  <progress max="${goal}" value="${Math.min(raised, goal)}" aria-labelledby="goal-label"></progress>
</section>`;
}

function choice(name: string, id: string, value: string, label: string, checked: boolean): string {
  return `<span class="choice"><input type="radio" name="${name}" id="${id}" value="${escapeHtml(value)}"${checked ? " checked" : ""}><label for="${id}">${escapeHtml(label)}</label></span>`;
}

function frequencySection(campaign: PublicCampaignWire, initial: number, locale: Locale): string {
  const options: [number, string][] = [];
  if (campaign.has_one_off) options.push([0, t(locale, "donate.frequency.one_off")]);
  if (campaign.has_subscription) {
    options.push([12, t(locale, "donate.frequency.monthly")], [1, t(locale, "donate.frequency.yearly")]);
  }
  const choices = options
    .map(([value, label]) => choice("frequency", `frequency-${value}`, String(value), label, value === initial))
    .join("\n    ");
  return `<fieldset class="group" data-field="frequency" aria-describedby="e-frequency">
  <legend>${w(locale, "donate.frequency_legend")}</legend>
  <div class="segmented">
    ${choices}
  </div>
  <p class="field-error" id="e-frequency" hidden></p>
</fieldset>`;
}

function asksGroup(
  kind: "one_off" | "recurring",
  rules: AmountRules,
  currency: string,
  hidden: boolean,
  locale: Locale,
  impacts: PublicCampaignWire["ask_impacts"] = [],
): string {
  const lines = impacts.filter((impact) => impact.recurring === (kind === "recurring"));
  const impactOf = (ask: number) => lines.find((impact) => toCents(impact.amount) === toCents(ask))?.text;
  const asks = rules.asks
    .map((ask) => {
      const id = `ask-${kind}-${idOf(String(ask))}`;
      const impact = impactOf(ask);
      if (!impact)
        return choice(`ask-${kind}`, id, String(ask), formatAmount(ask, currency, locale), ask === rules.default);
      // The line of impact is part of the amount's label: "€30 buys a school kit" is read as one choice.
      return `<span class="choice"><input type="radio" name="ask-${kind}" id="${id}" value="${ask}"${ask === rules.default ? " checked" : ""}><label for="${id}"><strong>${escapeHtml(formatAmount(ask, currency, locale))}</strong> <span class="impact">${escapeHtml(impact)}</span></label></span>`;
    })
    .join("\n    ");
  const withImpacts = rules.asks.some((ask) => impactOf(ask) !== undefined);
  return `<div class="asks${withImpacts ? " with-impacts" : ""}" data-asks="${kind}"${hidden ? " hidden" : ""}>
    ${asks}
  </div>`;
}

function amountSection(
  campaign: PublicCampaignWire,
  oneOff: AmountRules,
  recurring: AmountRules,
  initial: number,
  locale: Locale,
) {
  const current = initial === 0 ? oneOff : recurring;
  const prefill = current.custom && current.default !== null && !current.asks.includes(current.default);
  const symbol = formatAmount(0, campaign.currency, locale).replace(/[\d.,\s]/g, "") || campaign.currency;
  const costExample =
    campaign.cost_example_amount !== null && campaign.cost_example_label
      ? `<p class="cost-example" id="cost-example" aria-live="polite">${escapeHtml(
          t(locale, "donate.script.cost_one", {
            amount: formatAmount(campaign.cost_example_amount, campaign.currency, locale),
            label: campaign.cost_example_label,
          }),
        )}</p>`
      : "";
  return `<fieldset class="group" data-field="amount" aria-describedby="e-amount">
  <legend>${w(locale, "donate.amount_legend")} <span class="muted">(${escapeHtml(campaign.currency)})</span></legend>
  ${asksGroup("one_off", oneOff, campaign.currency, initial !== 0, locale, campaign.ask_impacts)}
  ${asksGroup("recurring", recurring, campaign.currency, initial === 0, locale, campaign.ask_impacts)}
  <div class="custom" id="custom-wrap"${current.custom ? "" : " hidden"}>
    <label for="custom-amount">${w(locale, "donate.other_amount")}</label>
    <div class="money"><span aria-hidden="true">${escapeHtml(symbol)}</span><input type="number" id="custom-amount" name="custom_amount" inputmode="decimal" step="0.01"${attribute("min", current.min ?? 0.01)}${attribute("max", current.max)}${prefill ? attribute("value", current.default) : ""} aria-describedby="custom-hint e-amount"></div>
    <p class="hint" id="custom-hint"></p>
  </div>
  ${costExample}
  <p class="field-error" id="e-amount" hidden></p>
  ${coverFeeField(campaign, locale)}
</fieldset>`;
}

/** The checkbox's words are set by the script as the amount changes ("Add €1.03 to cover processing fees"). */
function coverFeeField(campaign: PublicCampaignWire, locale: Locale): string {
  if (!campaign.cover_fee) return "";
  return `<div class="field cover-fee" data-field="cover_fee">
    <label class="check"><input type="checkbox" id="cover-fee" name="cover_fee"> <span id="cover-fee-label">${w(locale, "donate.script.cover_fee")}</span></label>
    <p class="field-error" id="e-cover-fee" hidden></p>
  </div>`;
}

function supporterField(field: string, required: boolean, locale: Locale): string {
  const id = `f-supporter-${idOf(field)}`;
  const label = t(locale, `donate.fields.${field}`);
  const common = `id="${id}" name="${field}" data-supporter="${field}"${required ? " required" : ""}${attribute("autocomplete", FIELD_AUTOCOMPLETE[field])} aria-describedby="e-${id}"`;
  let control: string;
  if (field === "sex") {
    control = `<select ${common}><option value="">—</option><option value="FEMALE">${w(locale, "donate.sex.female")}</option><option value="MALE">${w(locale, "donate.sex.male")}</option></select>`;
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

function supporterSection(campaign: PublicCampaignWire, locale: Locale): string {
  const fields = campaign.shown_fields
    .filter((field) => SUPPORTER_FIELDS.has(field))
    .map((field) => supporterField(field, campaign.required_fields.includes(field), locale))
    .join("\n    ");
  return `<fieldset class="group">
  <legend>${w(locale, "donate.details_legend")}</legend>
  <p class="muted small">${w(locale, "donate.required_note", { mark: "\u0000" }).replace("\u0000", '<span class="required">*</span>')}</p>
  <div class="fields">
    ${fields}
  </div>
</fieldset>`;
}

/** "I have read the privacy notice and agree to it", the notice linked when the organization gave its address. */
function privacyConsent(campaign: PublicCampaignWire, locale: Locale): string {
  const url = campaign.organization.privacy_policy_url;
  const words = w(locale, "donate.privacy_link");
  const link = url
    ? `<a href="${escapeHtml(url)}" target="_blank" rel="noopener" id="privacy-link">${words}</a>`
    : words;
  return w(locale, "donate.privacy_consent", { link: "\u0000" }).replace("\u0000", link);
}

function consentSection(campaign: PublicCampaignWire, locale: Locale): string {
  const note = campaign.privacy_note
    ? `<p class="privacy-note" id="privacy-note">${escapeHtml(campaign.privacy_note)}</p>`
    : "";
  const describedBy = campaign.privacy_note ? "privacy-note e-consent-privacy" : "e-consent-privacy";
  const marketing = MARKETING_CONSENTS.map(
    ([name, key]) =>
      `<label class="check"><input type="checkbox" name="${name}" data-consent="${name}"> ${w(locale, key)}</label>`,
  ).join("\n      ");
  return `<fieldset class="group">
  <legend>${w(locale, "donate.privacy_legend")}</legend>
  ${note}
  <div class="field" data-field="consents.privacy">
    <label class="check"><input type="checkbox" id="consent-privacy" name="privacy" data-consent="privacy" required aria-describedby="${describedBy}"> <span>${privacyConsent(campaign, locale)} <span class="required" aria-hidden="true">*</span></span></label>
    <p class="field-error" id="e-consent-privacy" hidden></p>
  </div>
  <fieldset class="nested">
    <legend>${w(locale, "donate.marketing_legend", { organization: campaign.organization.name })}</legend>
    <div class="checks">
      ${marketing}
    </div>
  </fieldset>
  <label class="check"><input type="checkbox" name="profilation_marketing" data-consent="profilation_marketing"> ${w(locale, "donate.profiling")}</label>
</fieldset>`;
}

/** "Dedicate this gift": a box that opens the tribute's fields (disabled while closed, so they are not checked). */
function tributeSection(campaign: PublicCampaignWire, locale: Locale): string {
  if (!campaign.allow_tribute) return "";
  const input = (name: string, type: string, max: number, required: boolean, autocomplete = "off") => {
    const id = `f-tribute-${idOf(name)}`;
    const marker = required ? ` <span class="required" aria-hidden="true">*</span>` : "";
    const control =
      name === "message"
        ? `<textarea id="${id}" data-tribute="${name}" rows="3" maxlength="${max}" disabled aria-describedby="e-${id}"></textarea>`
        : `<input type="${type}" id="${id}" data-tribute="${name}" maxlength="${max}" autocomplete="${autocomplete}"${required ? " required" : ""} disabled aria-describedby="e-${id}"${type === "email" ? ' spellcheck="false"' : ""}>`;
    return `<div class="field${name === "message" ? " wide" : ""}" data-field="tribute.${name}">
        <label for="${id}">${w(locale, `donate.tribute.${name}`)}${marker}</label>
        ${control}
        <p class="field-error" id="e-${id}" hidden></p>
      </div>`;
  };
  return `<fieldset class="group" id="tribute" data-field="tribute">
  <legend>${w(locale, "donate.tribute.legend")}</legend>
  <label class="check"><input type="checkbox" id="tribute-on" aria-controls="tribute-fields"> ${w(locale, "donate.tribute.toggle")}</label>
  <p class="field-error" id="e-tribute" hidden></p>
  <div id="tribute-fields" hidden>
    <fieldset class="nested" data-field="tribute.type" aria-describedby="e-tribute-type">
      <legend>${w(locale, "donate.tribute.type_legend")}</legend>
      <div class="segmented">
        <span class="choice"><input type="radio" name="tribute-type" id="tribute-type-honor" value="honor" data-tribute-type checked disabled><label for="tribute-type-honor">${w(locale, "donate.tribute.honor")}</label></span>
        <span class="choice"><input type="radio" name="tribute-type" id="tribute-type-memory" value="memory" data-tribute-type disabled><label for="tribute-type-memory">${w(locale, "donate.tribute.memory")}</label></span>
      </div>
      <p class="field-error" id="e-tribute-type" hidden></p>
    </fieldset>
    <div class="fields">
      ${input("name", "text", 200, true)}
      ${input("message", "text", 1000, false)}
    </div>
    <label class="check"><input type="checkbox" id="tribute-notify" aria-controls="tribute-notify-fields" disabled> ${w(locale, "donate.tribute.notify")}</label>
    <div id="tribute-notify-fields" hidden>
      <p class="hint" id="tribute-notify-hint">${w(locale, "donate.tribute.notify_hint")}</p>
      <div class="fields">
        ${input("recipient_name", "text", 200, false)}
        ${input("recipient_email", "email", 254, true)}
      </div>
    </div>
  </div>
</fieldset>`;
}

/** The campaign's own questions, each an accessible control with its error slot (`answers.<key>` on the wire). */
function questionsSection(campaign: PublicCampaignWire, locale: Locale): string {
  if (campaign.questions.length === 0) return "";
  const items = campaign.questions.map((question) => {
    const id = `f-answer-${idOf(question.key)}`;
    const field = `answers.${question.key}`;
    const marker = question.required ? ` <span class="required" aria-hidden="true">*</span>` : "";
    const required = question.required ? " required" : "";
    const data = `data-answer="${escapeHtml(question.key)}" data-answer-type="${escapeHtml(question.type)}"`;
    const error = `<p class="field-error" id="e-${id}" hidden></p>`;
    const options = question.options ?? [];
    if (question.type === "single_choice" || question.type === "multiple_choice") {
      const kind = question.type === "single_choice" ? "radio" : "checkbox";
      const choices = options
        .map((option, index) => {
          const optionId = `${id}-${index}`;
          return `<label class="check"><input type="${kind}" name="${id}" id="${optionId}" value="${escapeHtml(option)}"${kind === "radio" ? required : ""}> ${escapeHtml(option)}</label>`;
        })
        .join("\n        ");
      return `<fieldset class="nested question wide" data-field="${escapeHtml(field)}" ${data}${question.required ? " data-required" : ""} aria-describedby="e-${id}">
      <legend>${escapeHtml(question.label)}${marker}</legend>
      <div class="checks">
        ${choices}
      </div>
      ${error}
    </fieldset>`;
    }
    if (question.type === "checkbox") {
      return `<div class="field wide question" data-field="${escapeHtml(field)}">
      <label class="check"><input type="checkbox" id="${id}" ${data}${required} aria-describedby="e-${id}"> <span>${escapeHtml(question.label)}${marker}</span></label>
      ${error}
    </div>`;
    }
    const control =
      question.type === "long_text"
        ? `<textarea id="${id}" ${data} rows="3" maxlength="2000"${required} aria-describedby="e-${id}"></textarea>`
        : `<input type="text" id="${id}" ${data} maxlength="200"${required} aria-describedby="e-${id}">`;
    return `<div class="field wide question" data-field="${escapeHtml(field)}">
      <label for="${id}">${escapeHtml(question.label)}${marker}</label>
      ${control}
      ${error}
    </div>`;
  });
  return `<fieldset class="group" id="questions">
  <legend>${w(locale, "donate.questions_legend")}</legend>
  <div class="fields">
    ${items.join("\n    ")}
  </div>
</fieldset>`;
}

const PROCESSOR_LABELS: Record<string, string> = {
  sandbox: "donate.processor.card",
  stripe: "donate.processor.card_or_debit",
  manual: "donate.processor.manual",
};

function paymentSection(campaign: PublicCampaignWire, initial: number, locale: Locale): string {
  // Stripe's Payment Element takes the place of the sandbox card fields when the organization has Stripe.
  const online = campaign.stripe ? "stripe" : "sandbox";
  const known = campaign.processors.filter((processor) => processor.name === online || processor.name === "manual");
  const card = known.some((processor) => processor.name === online);
  const usable = known.filter((processor) => (initial === 0 ? processor.one_off : processor.recurring));
  const first = usable[0]?.name;
  const choices = known
    .map((processor) => {
      const key = PROCESSOR_LABELS[processor.name];
      const label = key ? t(locale, key) : processor.title;
      return choice("processor", `processor-${processor.name}`, processor.name, label, processor.name === first);
    })
    .join("\n    ");
  return `<fieldset class="group" data-field="processor" aria-describedby="e-processor">
  <legend>${w(locale, "donate.payment_legend")}</legend>
  <div class="segmented">
    ${choices}
  </div>
  <p class="field-error" id="e-processor" hidden></p>
  ${!card ? "" : campaign.stripe ? stripeFields(first === "stripe", locale) : cardFields(first === "sandbox", locale)}
  <p id="manual-note" class="hint"${first === "manual" ? "" : " hidden"}>${w(locale, "donate.manual_note")}</p>
  <p id="manual-one-off" class="hint" hidden>${w(locale, "donate.manual_one_off")}</p>
</fieldset>`;
}

/**
 * Where Stripe's Payment Element is mounted (cards, SEPA Direct Debit with its mandate text,
 * Apple Pay / Google Pay where the browser offers them); web/donate/donate.js mounts it.
 */
function stripeFields(shown: boolean, locale: Locale): string {
  return `<div id="stripe-fields" class="stripe-fields" data-field="stripe"${shown ? "" : " hidden"}>
    <div id="payment-element" class="payment-element"><p class="hint" id="payment-element-loading">${w(locale, "donate.stripe_loading")}</p></div>
    <p class="field-error" id="e-stripe" hidden></p>
  </div>`;
}

function cardFields(shown: boolean, locale: Locale): string {
  const year = new Date().getUTCFullYear();
  return `<div id="card-fields" class="fields"${shown ? "" : " hidden"}>
    <div class="field wide" data-field="card.number">
      <label for="f-card-number">${w(locale, "donate.card.number")} <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-number" data-card="number" inputmode="numeric" autocomplete="cc-number" maxlength="23" required aria-describedby="card-hint e-f-card-number">
      <p class="field-error" id="e-f-card-number" hidden></p>
    </div>
    <div class="field" data-field="card.exp_month">
      <label for="f-card-exp-month">${w(locale, "donate.card.exp_month")} <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-exp-month" data-card="exp_month" inputmode="numeric" autocomplete="cc-exp-month" placeholder="MM" maxlength="2" pattern="0?[1-9]|1[0-2]" required aria-describedby="e-f-card-exp-month">
      <p class="field-error" id="e-f-card-exp-month" hidden></p>
    </div>
    <div class="field" data-field="card.exp_year">
      <label for="f-card-exp-year">${w(locale, "donate.card.exp_year")} <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-exp-year" data-card="exp_year" inputmode="numeric" autocomplete="cc-exp-year" placeholder="${year + 2}" maxlength="4" pattern="[0-9]{2}|[0-9]{4}" required aria-describedby="e-f-card-exp-year">
      <p class="field-error" id="e-f-card-exp-year" hidden></p>
    </div>
    <div class="field" data-field="card.cvc">
      <label for="f-card-cvc">${w(locale, "donate.card.cvc")} <span class="required" aria-hidden="true">*</span></label>
      <input type="text" id="f-card-cvc" data-card="cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4" pattern="[0-9]{3,4}" required aria-describedby="e-f-card-cvc">
      <p class="field-error" id="e-f-card-cvc" hidden></p>
    </div>
    <p class="hint wide" id="card-hint">${w(locale, "donate.card.hint")}</p>
  </div>`;
}

function successSection(locale: Locale): string {
  return `<section id="success" class="success" tabindex="-1" aria-labelledby="success-title" hidden>
  <h2 id="success-title">${w(locale, "donate.success_title")}</h2>
  <p id="success-summary"></p>
  <div id="transfer" class="transfer" hidden>
    <h3>${w(locale, "donate.transfer_heading")}</h3>
    <p id="transfer-text"></p>
    <dl>
      <dt>${w(locale, "donate.transfer_amount")}</dt><dd id="transfer-amount"></dd>
      <dt>${w(locale, "donate.transfer_payee")}</dt><dd id="transfer-payee"></dd>
      <dt>IBAN</dt><dd><code id="transfer-iban"></code></dd>
      <dt id="transfer-bic-label">BIC</dt><dd><code id="transfer-bic"></code></dd>
      <dt>${w(locale, "donate.transfer_reference")}</dt><dd><code id="transfer-reference"></code></dd>
    </dl>
  </div>
  <div id="transfer-contact" class="transfer" hidden>
    <h3>${w(locale, "donate.transfer_contact_heading")}</h3>
    <p id="transfer-contact-text"></p>
  </div>
  <p id="receipt" hidden><a id="receipt-link" href="#" rel="noopener">${w(locale, "donate.receipt_link")}</a></p>
</section>`;
}

/** The donation page of a campaign; `nonce` must be the one in the response's CSP header. */
/** Where the page loads the ALTCHA widget from: our own origin, out of node_modules (donate-page.routes.ts). */
export const CHALLENGE_ASSETS = {
  script: "/donate/assets/altcha.js",
  style: "/donate/assets/altcha.css",
  worker: "/donate/assets/altcha-pbkdf2.worker.js",
} as const;

/**
 * The cover in each of its widths (PURPOSES.cover: 480, 960, 1600, never wider than the upload),
 * by their paths on this server: the browser picks the one the screen needs.
 */
function coverImage(campaign: PublicCampaignWire): string {
  const named = campaign.cover_image_url ? parseImageUrl(campaign.cover_image_url) : undefined;
  if (!named) return "";
  const widths = [...PURPOSES.cover.widths.filter((width) => width < named.width), named.width];
  const srcset = widths
    .map((width) => `${imagePath(named.organizationId, named.imageId, width, "jpeg")} ${width}w`)
    .join(", ");
  // Decorative: the title and the story below say what the campaign is.
  return `<img class="cover" id="cover" src="${escapeHtml(imagePath(named.organizationId, named.imageId, widths[0] ?? named.width, "jpeg"))}" srcset="${escapeHtml(srcset)}" sizes="(min-width: 42rem) 38rem, calc(100vw - 2rem)" alt="" width="${named.width}" height="${Math.round((named.width * 9) / 16)}">
  `;
}

/** The campaign's story, from its Markdown (story.ts sanitises it). */
function storySection(campaign: PublicCampaignWire, locale: Locale): string {
  if (!campaign.story?.trim()) return "";
  return `\n<section class="story" id="story" aria-label="${w(locale, "donate.story_label")}">
${renderStory(campaign.story)}
</section>`;
}

/** Before its start date or from its end date on, the page says so, in the organization's time zone, and shows no form. */
function closedNotice(campaign: PublicCampaignWire, locale: Locale): string {
  const timeZone = campaign.organization.time_zone;
  const start = campaign.start_date ? new Date(campaign.start_date) : null;
  if (start && Date.now() < start.getTime()) {
    const date = new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short", timeZone }).format(start);
    return `<div class="notice" id="campaign-closed" role="status"><h2>${w(locale, "donate.campaign_not_started", { date })}</h2>
<p>${w(locale, "donate.campaign_not_started_text")}</p></div>`;
  }
  // end_date is the first instant without gifts: the last day that took them is the one before it.
  const end = new Date(new Date(campaign.end_date ?? Date.now()).getTime() - 1);
  const date = new Intl.DateTimeFormat(locale, { dateStyle: "long", timeZone }).format(end);
  return `<div class="notice" id="campaign-closed" role="status"><h2>${w(locale, "donate.campaign_ended", { date })}</h2>
<p>${w(locale, "donate.campaign_ended_text")}</p></div>`;
}

/** Test-mode Stripe keys, or the organization's test mode (the sandbox): nothing is charged, and the donor must know it. */
function testModeBanner(campaign: PublicCampaignWire, locale: Locale): string {
  const detail = campaign.test_mode
    ? "donate.test_mode.sandbox"
    : campaign.stripe?.test_mode
      ? "donate.test_mode.stripe"
      : null;
  if (!detail) return "";
  return `<p class="test-mode" id="test-mode" role="note" aria-label="${w(locale, "donate.test_mode.label")}"><strong>${w(locale, "donate.test_mode.title")}</strong> ${w(locale, detail)}</p>\n`;
}

export function donatePage(
  campaign: PublicCampaignWire,
  options: {
    nonce: string;
    locale: Locale;
    path: string;
    /** The logo's address when it is one of the organization's images served here (nothing else is loaded). */
    logoUrl?: string | null;
    /** The sites allowed to frame the page (its frame-ancestors): the only ones its script posts messages to. */
    embedOrigins?: readonly string[];
  },
): string {
  const { nonce, locale, path, logoUrl } = options;
  const title = `${campaign.title} · ${campaign.organization.name}`;
  // The name beside the logo says who it is: the image itself needs no words of its own.
  const logo = logoUrl ? `<img class="org-logo" id="org-logo" src="${escapeHtml(logoUrl)}" alt="" height="48">` : "";
  const header = `${testModeBanner(campaign, locale)}<header>
  <p class="org">${logo}<span>${escapeHtml(campaign.organization.name)}</span></p>
  ${coverImage(campaign)}<h1>${escapeHtml(campaign.title)}</h1>
  ${goalSection(campaign, locale)}
</header>${storySection(campaign, locale)}`;
  if (!campaign.is_open) {
    return pageShell({ title, nonce, locale, path, body: `${header}\n${closedNotice(campaign, locale)}` });
  }
  if (!campaign.has_one_off && !campaign.has_subscription) {
    return pageShell({
      title,
      nonce,
      locale,
      path,
      body: `${header}\n<p class="notice">${w(locale, "donate.not_accepting")}</p>`,
    });
  }
  // Production without a processor: no card form (never the sandbox's), and no bank transfer without an IBAN.
  if (campaign.processors.length === 0) {
    return pageShell({
      title,
      nonce,
      locale,
      path,
      body: `${header}\n<div class="notice" id="not-set-up"><h2>${w(locale, "donate.not_set_up_title")}</h2>
<p>${w(locale, "donate.not_set_up_text", { organization: campaign.organization.name })}</p></div>`,
    });
  }
  const initial = campaign.has_one_off ? 0 : 12;
  const oneOff = amountRules(campaign, false);
  const recurring = amountRules(campaign, true);
  const config = {
    locale,
    // The script's words (plain {name} arguments) and the catalog's message for each error code.
    messages: messagesUnder(locale, "donate.script"),
    errors: messagesUnder(locale, "errors"),
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
    // Framed by embed.js on one of these sites, the page tells it its height and a completed gift (docs/embed.md).
    embed_origins: options.embedOrigins ?? [],
  };
  const body = `${header}
<noscript><p class="notice">${w(locale, "donate.noscript")}</p></noscript>
<form id="donate-form" novalidate aria-describedby="form-error">
<div id="form-error" class="alert" role="alert" tabindex="-1" hidden></div>
${frequencySection(campaign, initial, locale)}
${amountSection(campaign, oneOff, recurring, initial, locale)}
${supporterSection(campaign, locale)}
${tributeSection(campaign, locale)}
${questionsSection(campaign, locale)}
${consentSection(campaign, locale)}
${paymentSection(campaign, initial, locale)}
<div id="challenge" class="group challenge" data-field="altcha" hidden>
  <p class="hint" id="challenge-hint">${w(locale, "donate.challenge_hint")}</p>
  <div id="challenge-widget"></div>
  <p class="field-error" id="e-altcha" hidden></p>
</div>
<button type="submit" id="submit" class="primary">${w(locale, "donate.script.submit")}</button>
</form>
${successSection(locale)}`;
  const script = `<script type="application/json" id="donate-config" nonce="${nonce}">${scriptJson(config)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
`;
  // Stripe.js straight from Stripe, as Stripe requires (never bundled or self-hosted); async, the script waits for it.
  const head = campaign.stripe
    ? `<script src="${STRIPE_JS_URL}" id="stripe-js" nonce="${nonce}" async></script>\n`
    : undefined;
  return pageShell({ title, nonce, locale, path, body, script, head });
}

const ERROR_COPY: Record<number, { title: string; message: string }> = {
  404: { title: "donate.error_page.not_found_title", message: "donate.error_page.not_found" },
  410: { title: "donate.error_page.ended_title", message: "donate.error_page.ended" },
  500: { title: "donate.error_page.failed_title", message: "donate.error_page.failed" },
};

/** A friendly page for an unknown, ended or failing campaign page, in the same look. */
export function donateErrorPage(status: number, options: { nonce: string; locale: Locale }): string {
  const copy = ERROR_COPY[status] ?? (ERROR_COPY[500] as { title: string; message: string });
  const { locale } = options;
  return pageShell({
    title: t(locale, copy.title),
    nonce: options.nonce,
    locale,
    body: `<h1>${w(locale, copy.title)}</h1>\n<p>${w(locale, copy.message)}</p>`,
  });
}

// The page's own stylesheet and script (web/donate/), read once and inlined under the response's nonce.
const asset = (file: string) => readFileSync(new URL(`../../../web/donate/${file}`, import.meta.url), "utf8");
const STYLE = asset("donate.css");
const SCRIPT = asset("donate.js");
