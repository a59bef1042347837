import { readFileSync } from "node:fs";
import type { ValidationIssue } from "../../errors/app-error.js";
import { escapeHtml, htmlDocument } from "../../http/html-page.js";
import type { Locale } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";
import type { CampaignRow } from "../campaigns/campaigns.repo.js";
import type { DonationRow } from "../donations/donations.repo.js";
import { MAX_CANCEL_REASON, MAX_PAUSE_CYCLES, type StripeSetup } from "../donations/recurring-changes.service.js";
import { STRIPE_JS_URL } from "../giving/donate-page.js";
import type { PaymentMethodRow } from "../payment-methods/payment-methods.repo.js";
import { giftStateLabel } from "./donor-portal.page.js";
import { type DonorSession, portalPath } from "./donor-session.js";
import { csrfField, errorSummary, errorsByField, html, say, textField, topBar } from "./portal.page.js";
import { periodOf, portalFormat } from "./portal-i18n.js";

/** One recurring gift as its page shows it. */
export interface DonorGiftView {
  donation: DonationRow;
  campaign: CampaignRow | undefined;
  method: PaymentMethodRow | undefined;
}

/** Which form an error belongs to, and what the donor typed (shown again). */
export interface GiftFormState {
  form?: "amount" | "frequency" | "pause" | "resume" | "payment_method" | "cancel";
  errors?: ValidationIssue[];
  values?: Record<string, string>;
  notice?: string;
}

const FREQUENCY: Record<number, string> = {
  0: "portal.frequency.one_off",
  1: "portal.frequency.yearly",
  12: "portal.frequency.monthly",
};

export const giftPath = (session: DonorSession, id: number, rest = "") =>
  portalPath(session.organizationSlug, `gifts/${id}${rest ? `/${rest}` : ""}`);

export const giftTitle = (gift: DonorGiftView, locale: Locale) =>
  gift.campaign?.title || t(locale, "portal.gift.default_title", { code: gift.donation.code });

const isPaused = (donation: DonationRow, now = new Date()) =>
  donation.pausedUntil !== null && donation.pausedUntil > now;

/** Whether the gift can still change: a recurring gift that is active or waiting for a retry. */
export const changeable = (donation: DonationRow) =>
  (donation.frequency === 1 || donation.frequency === 12) &&
  (donation.state === "active" || donation.state === "past_due");

/** An imported recurring gift whose donor was asked to set up a card: it runs once they have. */
export const awaitingCard = (donation: DonationRow) =>
  donation.activation === "card_requested" &&
  donation.state === "pending" &&
  (donation.frequency === 1 || donation.frequency === 12);

/** What the campaign lets a recurring gift be, as the amount's hint says it. */
function amountHint(locale: Locale, campaign: CampaignRow | undefined, currency: string): string {
  if (!campaign) return "";
  const { money } = portalFormat(locale, "UTC");
  const { minSubscriptionAmount: min, maxSubscriptionAmount: max } = campaign;
  if (!campaign.allowCustomSubscriptionAmount) {
    const asks = (campaign.asksSubscription ?? []).map(Number);
    const amounts = asks.map((ask) => money(ask, currency)).join(", ");
    return asks.length > 0 ? t(locale, "portal.gift.amount_choose", { amounts }) : "";
  }
  if (min !== null && max !== null) {
    return t(locale, "portal.gift.amount_range", { min: money(min, currency), max: money(max, currency) });
  }
  if (min !== null) return t(locale, "portal.gift.amount_min", { min: money(min, currency) });
  if (max !== null) return t(locale, "portal.gift.amount_max", { max: money(max, currency) });
  return "";
}

function hiddenForm(action: string, session: DonorSession, label: string, extra = "") {
  return `<form method="post" action="${html(action)}">
      ${csrfField(session)}${extra}
      <button type="submit" class="secondary">${html(label)}</button>
    </form>`;
}

/** The gift's page: what it is now, and a form for each change the donor may make. */
export function giftBody(session: DonorSession, gift: DonorGiftView, state: GiftFormState = {}): string {
  const { locale } = session;
  const { donation, campaign, method } = gift;
  const { date, perPeriod } = portalFormat(locale, session.timeZone);
  const frequency = donation.frequency ?? 0;
  const per = periodOf(frequency);
  const errors = state.errors ?? [];
  const byField = errorsByField(errors);
  const values = state.values ?? {};
  const notice = state.notice ? `<p class="notice" role="status" tabindex="-1">${html(state.notice)}</p>` : "";
  const next =
    changeable(donation) && donation.nextChargeDate
      ? `<p>${say(locale, "portal.gift_card.next_payment", { date: date(donation.nextChargeDate) })}</p>`
      : "";
  const frequencyKey = FREQUENCY[frequency];
  const summary = `<section aria-labelledby="summary-title">
    <h2 id="summary-title" class="visually-hidden">${say(locale, "portal.gift.summary")}</h2>
    <p><span class="amount">${html(perPeriod(donation.amount, donation.currency, frequency))}</span>
      · ${frequencyKey ? say(locale, frequencyKey) : ""} · <span class="badge">${html(giftStateLabel(locale, donation, date).label)}</span></p>
    <p class="muted">${say(locale, frequency > 0 ? "portal.gift_card.started_recurring" : "portal.gift_card.started_one_off", { date: date(donation.createDate) })} · ${html(donation.code)}</p>
    ${next}
    ${method ? `<p>${say(locale, "portal.gift.paid_with", { method: method.label })}</p>` : ""}
    ${donation.state === "past_due" ? `<p class="field-error">${say(locale, "portal.gift.past_due")}</p>` : ""}
  </section>`;
  const back = `<p><a href="${html(portalPath(session.organizationSlug))}">${say(locale, "portal.gift.back")}</a></p>`;
  if (awaitingCard(donation)) {
    return `<h1>${html(giftTitle(gift, locale))}</h1>${notice}
  ${summary}
  <section aria-labelledby="activation-title">
    <h2 id="activation-title">${say(locale, "portal.gift.activation_title")}</h2>
    <p>${say(locale, "portal.gift.activation_text")}</p>
    <p><a href="${html(giftPath(session, donation.id, "payment-method"))}">${say(locale, "portal.gift.activation_link")}</a></p>
  </section>
  ${back}`;
  }
  if (!changeable(donation)) {
    return `<h1>${html(giftTitle(gift, locale))}</h1>${notice}
  ${summary}
  ${back}`;
  }
  const paused = isPaused(donation);
  const amountSection = `<section aria-labelledby="amount-title">
    <h2 id="amount-title">${say(locale, "portal.gift.amount_title")}</h2>
    <form class="stack" method="post" action="${html(giftPath(session, donation.id, "amount"))}" novalidate>
      ${csrfField(session)}
      ${textField({
        name: "amount",
        label: t(locale, frequency === 1 ? "portal.gift.amount_label_year" : "portal.gift.amount_label_month", {
          currency: donation.currency,
        }),
        value: values.amount ?? String(donation.amount),
        hint: [amountHint(locale, campaign, donation.currency), t(locale, "portal.gift.amount_from_next")]
          .filter(Boolean)
          .join(". "),
        error: state.form === "amount" ? byField.get("amount") : undefined,
        autocomplete: "off",
        maxLength: 12,
      }).replace('type="text"', 'type="text" inputmode="decimal"')}
      <p><button type="submit">${say(locale, "portal.gift.amount_submit")}</button></p>
    </form>
  </section>`;
  const other = frequency === 12 ? 1 : 12;
  const frequencySection =
    donation.state === "active"
      ? `<section aria-labelledby="frequency-title">
    <h2 id="frequency-title">${say(locale, "portal.gift.frequency_title")}</h2>
    ${state.form === "frequency" && errors[0] ? `<p class="field-error" id="field-frequency">${html(errors[0].message)}</p>` : ""}
    <p>${say(locale, frequency === 12 ? "portal.gift.gives_monthly" : "portal.gift.gives_yearly")}</p>
    ${hiddenForm(
      giftPath(session, donation.id, "frequency"),
      session,
      t(locale, other === 1 ? "portal.gift.to_yearly" : "portal.gift.to_monthly"),
      `<input type="hidden" name="frequency" value="${other}">`,
    )}
  </section>`
      : "";
  const pauseError = state.form === "pause" ? byField.get("cycles") : undefined;
  const pauseSection =
    donation.state !== "active"
      ? ""
      : paused
        ? `<section aria-labelledby="pause-title">
    <h2 id="pause-title">${say(locale, "portal.gift.pause_title")}</h2>
    <p>${say(locale, "portal.gift.paused_until", { date: date(donation.pausedUntil as Date) })}</p>
    ${hiddenForm(giftPath(session, donation.id, "resume"), session, t(locale, "portal.gift.resume"))}
  </section>`
        : `<section aria-labelledby="pause-title">
    <h2 id="pause-title">${say(locale, "portal.gift.pause_title")}</h2>
    <form class="stack" method="post" action="${html(giftPath(session, donation.id, "pause"))}" novalidate>
      ${csrfField(session)}
      <fieldset id="field-cycles"${pauseError ? ' aria-describedby="field-cycles-error"' : ""}>
        <legend>${say(locale, "portal.gift.pause_legend")}</legend>
        ${Array.from({ length: MAX_PAUSE_CYCLES }, (_, index) => index + 1)
          .map(
            (cycles) =>
              `<label class="check" for="cycles-${cycles}"><input type="radio" id="cycles-${cycles}" name="cycles" value="${cycles}"${
                (values.cycles ?? "1") === String(cycles) ? " checked" : ""
              }> ${say(locale, "portal.gift.pause_option", { count: cycles, per })}</label>`,
          )
          .join("\n        ")}
        ${pauseError ? `<p class="field-error" id="field-cycles-error">${html(pauseError)}</p>` : ""}
      </fieldset>
      <p><button type="submit">${say(locale, "portal.gift.pause_submit")}</button></p>
    </form>
  </section>`;
  const methodSection = `<section aria-labelledby="method-title">
    <h2 id="method-title">${say(locale, "portal.gift.method_title")}</h2>
    <p>${method ? say(locale, "portal.gift.method_now", { method: method.label }) : say(locale, "portal.gift.method_none")}</p>
    <p><a href="${html(giftPath(session, donation.id, "payment-method"))}">${say(locale, "portal.gift.method_update")}</a></p>
  </section>`;
  const cancelSection = `<section aria-labelledby="cancel-title">
    <h2 id="cancel-title">${say(locale, "portal.gift.stop_title")}</h2>
    <p><a href="${html(giftPath(session, donation.id, "cancel"))}">${say(locale, "portal.gift.stop_link")}</a></p>
  </section>`;
  const generalErrors = state.form && state.form !== "amount" && state.form !== "pause" ? [] : errors;
  return `${errorSummary(generalErrors, locale)}<h1>${html(giftTitle(gift, locale))}</h1>${notice}
  ${summary}
  ${amountSection}
  ${frequencySection}
  ${pauseSection}
  ${methodSection}
  ${cancelSection}
  ${back}`;
}

/** The confirmation step of a cancellation, with an optional reason. */
export function cancelBody(session: DonorSession, gift: DonorGiftView, state: GiftFormState = {}): string {
  const { locale } = session;
  const { donation } = gift;
  const { perPeriod } = portalFormat(locale, session.timeZone);
  const error = errorsByField(state.errors ?? []).get("reason");
  const amount = perPeriod(donation.amount, donation.currency, donation.frequency);
  return `${errorSummary(state.errors ?? [], locale)}<h1>${say(locale, "portal.cancel.heading")}</h1>
  <p>${say(locale, "portal.cancel.text", { amount, campaign: giftTitle(gift, locale) })}</p>
  <form class="stack" method="post" action="${html(giftPath(session, donation.id, "cancel"))}" novalidate>
    ${csrfField(session)}
    <div class="field wide">
      <label for="field-reason">${say(locale, "portal.cancel.reason_label")}</label>
      <textarea id="field-reason" name="reason" rows="4" maxlength="${MAX_CANCEL_REASON}"${
        error ? ' aria-invalid="true" aria-describedby="field-reason-error"' : ""
      }>${html(state.values?.reason ?? "")}</textarea>
      ${error ? `<p class="field-error" id="field-reason-error">${html(error)}</p>` : ""}
    </div>
    <p><button type="submit">${say(locale, "portal.cancel.submit")}</button></p>
  </form>
  <p><a href="${html(giftPath(session, donation.id))}">${say(locale, "portal.cancel.keep")}</a></p>`;
}

/** The sandbox card form (test card numbers decide what renewals do, as on the donation page). */
export function sandboxMethodBody(session: DonorSession, gift: DonorGiftView, state: GiftFormState = {}): string {
  const { locale } = session;
  const { donation } = gift;
  const errors = state.errors ?? [];
  const byField = errorsByField(errors);
  const values = state.values ?? {};
  const field = (name: string, label: string, options: { autocomplete: string; maxLength: number; hint?: string }) =>
    textField({
      name,
      label,
      value: name === "card_number" || name === "cvc" ? "" : (values[name] ?? ""),
      error: byField.get(name),
      ...options,
    });
  const when = donation.state === "past_due" ? "portal.method.retry_now" : "portal.method.next_uses_card";
  return `${errorSummary(errors, locale)}<h1>${say(locale, "portal.method.title")}</h1>
  <p>${say(locale, "portal.method.for_gift", { campaign: giftTitle(gift, locale) })} ${say(locale, when)}</p>
  <form class="stack" method="post" action="${html(giftPath(session, donation.id, "payment-method"))}" novalidate>
    ${csrfField(session)}
    <div class="fields">
      ${field("card_number", t(locale, "portal.method.card_number"), { autocomplete: "cc-number", maxLength: 23, hint: t(locale, "portal.method.card_hint") })}
      ${field("exp_month", t(locale, "portal.method.exp_month"), { autocomplete: "cc-exp-month", maxLength: 2 })}
      ${field("exp_year", t(locale, "portal.method.exp_year"), { autocomplete: "cc-exp-year", maxLength: 4 })}
      ${field("cvc", t(locale, "portal.method.cvc"), { autocomplete: "cc-csc", maxLength: 4 })}
    </div>
    <p><button type="submit">${say(locale, "portal.method.save_card")}</button></p>
  </form>
  <p><a href="${html(giftPath(session, donation.id))}">${say(locale, "portal.method.back")}</a></p>`;
}

const STYLE = readFileSync(new URL("../../../web/portal/portal.css", import.meta.url), "utf8");

/** JSON inside a script element: `<` escaped so the text can never close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/**
 * The Stripe payment-method page: Stripe's Payment Element in setup mode (the SetupIntent's client
 * secret), confirmed in the page with `stripe.confirmSetup`; the form then sends the SetupIntent id,
 * which the server asks Stripe about. A whole document: it loads Stripe.js, which the portal's other
 * pages never do. Stripe's element speaks the page's language.
 */
export function stripeMethodDocument(
  session: DonorSession,
  gift: DonorGiftView,
  setup: StripeSetup,
  nonce: string,
  state: GiftFormState = {},
): string {
  const { locale } = session;
  const { donation } = gift;
  const errors = state.errors ?? [];
  const when = donation.state === "past_due" ? "portal.method.retry_now" : "portal.method.next_uses_method";
  const path = giftPath(session, donation.id, "payment-method");
  const body = `<a class="skip" href="#main">${say(locale, "portal.shell.skip")}</a>
${topBar({ locale, path, session, signOut: false })}
<main id="main" class="wrap">
${errorSummary(errors, locale)}<h1>${say(locale, "portal.method.title")}</h1>
  <p>${say(locale, "portal.method.for_gift", { campaign: giftTitle(gift, locale) })} ${say(locale, when)}</p>
  <form id="setup-form" class="stack" method="post" action="${html(path)}" novalidate>
    ${csrfField(session)}
    <input type="hidden" name="setup_intent" value="">
    <div id="payment-element"></div>
    <p class="field-error" id="e-stripe" role="alert" hidden></p>
    <p><button type="submit" id="setup-submit">${say(locale, "portal.method.save_method")}</button></p>
  </form>
  <p><a href="${html(giftPath(session, donation.id))}">${say(locale, "portal.method.back")}</a></p>
</main>`;
  const config = scriptJson({ publishable_key: setup.publishableKey, client_secret: setup.clientSecret, locale });
  const scripts = `<script type="application/json" id="setup-config">${config}</script>
<script nonce="${nonce}">
(() => {
  "use strict";
  const config = JSON.parse(document.getElementById("setup-config").textContent);
  const form = document.getElementById("setup-form");
  const button = document.getElementById("setup-submit");
  const failure = document.getElementById("e-stripe");
  const fail = (message) => {
    failure.textContent = message;
    failure.hidden = false;
    button.disabled = false;
  };
  function start() {
    const stripe = window.Stripe(config.publishable_key, { locale: config.locale });
    const elements = stripe.elements({ clientSecret: config.client_secret });
    elements.create("payment").mount("#payment-element");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      button.disabled = true;
      failure.hidden = true;
      const submitted = await elements.submit();
      if (submitted.error) return fail(submitted.error.message);
      const result = await stripe.confirmSetup({
        elements,
        redirect: "if_required",
        confirmParams: { return_url: window.location.href },
      });
      if (result.error) return fail(result.error.message);
      form.elements.setup_intent.value = result.setupIntent.id;
      form.submit();
    });
  }
  if (window.Stripe) start();
  else document.getElementById("stripe-js").addEventListener("load", start);
})();
</script>
`;
  return htmlDocument({
    title: `${t(locale, "portal.method.title")} · ${session.organizationName}`,
    nonce,
    style: STYLE,
    lang: locale,
    head: `<meta name="robots" content="noindex">\n<script src="${escapeHtml(STRIPE_JS_URL)}" id="stripe-js" nonce="${nonce}" async></script>\n`,
    body,
    scripts,
  });
}
