import { readFileSync } from "node:fs";
import type { ValidationIssue } from "../../errors/app-error.js";
import { escapeHtml, htmlDocument } from "../../http/html-page.js";
import { formatMoney } from "../../payments/money.js";
import type { CampaignRow } from "../campaigns/campaigns.repo.js";
import type { DonationRow } from "../donations/donations.repo.js";
import { MAX_CANCEL_REASON, MAX_PAUSE_CYCLES, type StripeSetup } from "../donations/recurring-changes.service.js";
import { STRIPE_JS_URL } from "../giving/donate-page.js";
import type { PaymentMethodRow } from "../payment-methods/payment-methods.repo.js";
import { type DonorSession, portalPath } from "./donor-session.js";
import { csrfField, errorSummary, errorsByField, html, textField } from "./portal.page.js";

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

const FREQUENCY: Record<number, string> = { 0: "One-off", 1: "Yearly", 12: "Monthly" };
const PER: Record<number, string> = { 1: " a year", 12: " a month" };

export const giftPath = (session: DonorSession, id: number, rest = "") =>
  portalPath(session.organizationSlug, `gifts/${id}${rest ? `/${rest}` : ""}`);

function formatters(session: DonorSession) {
  const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeZone: session.timeZone });
  return { date: (value: Date) => day.format(value), money: formatMoney };
}

export const giftTitle = (gift: DonorGiftView) => gift.campaign?.title || `Gift ${gift.donation.code}`;

const isPaused = (donation: DonationRow, now = new Date()) =>
  donation.pausedUntil !== null && donation.pausedUntil > now;

/** Whether the gift can still change: a recurring gift that is active or waiting for a retry. */
export const changeable = (donation: DonationRow) =>
  (donation.frequency === 1 || donation.frequency === 12) &&
  (donation.state === "active" || donation.state === "past_due");

function stateLabel(donation: DonationRow, date: (value: Date) => string) {
  if (changeable(donation) && isPaused(donation)) return `Paused until ${date(donation.pausedUntil as Date)}`;
  const labels: Record<string, string> = {
    pending: "Awaiting payment",
    active: "Active",
    past_due: "Last payment failed",
    done: "Received",
    revoked: donation.frequency ? "Stopped" : "Refunded or cancelled",
  };
  return labels[donation.state] ?? donation.state;
}

function amountHint(campaign: CampaignRow | undefined, currency: string): string {
  if (!campaign) return "";
  const { minSubscriptionAmount: min, maxSubscriptionAmount: max } = campaign;
  if (!campaign.allowCustomSubscriptionAmount) {
    const asks = (campaign.asksSubscription ?? []).map(Number);
    return asks.length > 0 ? `Choose one of: ${asks.map((ask) => formatMoney(ask, currency)).join(", ")}` : "";
  }
  if (min !== null && max !== null) return `From ${formatMoney(min, currency)} to ${formatMoney(max, currency)}`;
  if (min !== null) return `At least ${formatMoney(min, currency)}`;
  if (max !== null) return `At most ${formatMoney(max, currency)}`;
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
  const { donation, campaign, method } = gift;
  const { date, money } = formatters(session);
  const frequency = donation.frequency ?? 0;
  const errors = state.errors ?? [];
  const byField = errorsByField(errors);
  const values = state.values ?? {};
  const notice = state.notice ? `<p class="notice" role="status" tabindex="-1">${html(state.notice)}</p>` : "";
  const next =
    changeable(donation) && donation.nextChargeDate
      ? `<p>Next payment: ${html(date(donation.nextChargeDate))}</p>`
      : "";
  const summary = `<section aria-labelledby="summary-title">
    <h2 id="summary-title" class="visually-hidden">Summary</h2>
    <p><span class="amount">${html(money(donation.amount, donation.currency))}${PER[frequency] ?? ""}</span>
      · ${FREQUENCY[frequency] ?? ""} · <span class="badge">${html(stateLabel(donation, date))}</span></p>
    <p class="muted">Started ${html(date(donation.createDate))} · ${html(donation.code)}</p>
    ${next}
    ${method ? `<p>Paid with ${html(method.label)}</p>` : ""}
    ${donation.state === "past_due" ? '<p class="field-error">The last payment failed. Update your payment method and we will try again right away.</p>' : ""}
  </section>`;
  const back = `<p><a href="${html(portalPath(session.organizationSlug))}">Back to your donations</a></p>`;
  if (!changeable(donation)) {
    return `<h1>${html(giftTitle(gift))}</h1>${notice}
  ${summary}
  ${back}`;
  }
  const paused = isPaused(donation);
  const amountSection = `<section aria-labelledby="amount-title">
    <h2 id="amount-title">Change the amount</h2>
    <form class="stack" method="post" action="${html(giftPath(session, donation.id, "amount"))}" novalidate>
      ${csrfField(session)}
      ${textField({
        name: "amount",
        label: `New amount (${donation.currency})${PER[frequency] ?? ""}`,
        value: values.amount ?? String(donation.amount),
        hint: [amountHint(campaign, donation.currency), "From your next payment on."].filter(Boolean).join(". "),
        error: state.form === "amount" ? byField.get("amount") : undefined,
        autocomplete: "off",
        maxLength: 12,
      }).replace('type="text"', 'type="text" inputmode="decimal"')}
      <p><button type="submit">Change the amount</button></p>
    </form>
  </section>`;
  const other = frequency === 12 ? 1 : 12;
  const frequencySection =
    donation.state === "active"
      ? `<section aria-labelledby="frequency-title">
    <h2 id="frequency-title">Monthly or yearly</h2>
    ${state.form === "frequency" && errors[0] ? `<p class="field-error" id="field-frequency">${html(errors[0].message)}</p>` : ""}
    <p>You give ${frequency === 12 ? "every month" : "once a year"}.</p>
    ${hiddenForm(
      giftPath(session, donation.id, "frequency"),
      session,
      other === 1 ? "Give yearly instead" : "Give monthly instead",
      `<input type="hidden" name="frequency" value="${other}">`,
    )}
  </section>`
      : "";
  const unit = frequency === 12 ? "month" : "year";
  const pauseError = state.form === "pause" ? byField.get("cycles") : undefined;
  const pauseSection =
    donation.state !== "active"
      ? ""
      : paused
        ? `<section aria-labelledby="pause-title">
    <h2 id="pause-title">Pause</h2>
    <p>Your gift is paused until ${html(date(donation.pausedUntil as Date))}.</p>
    ${hiddenForm(giftPath(session, donation.id, "resume"), session, "Resume now")}
  </section>`
        : `<section aria-labelledby="pause-title">
    <h2 id="pause-title">Pause</h2>
    <form class="stack" method="post" action="${html(giftPath(session, donation.id, "pause"))}" novalidate>
      ${csrfField(session)}
      <fieldset id="field-cycles"${pauseError ? ' aria-describedby="field-cycles-error"' : ""}>
        <legend>Skip the next payments</legend>
        ${Array.from({ length: MAX_PAUSE_CYCLES }, (_, index) => index + 1)
          .map(
            (cycles) =>
              `<label class="check" for="cycles-${cycles}"><input type="radio" id="cycles-${cycles}" name="cycles" value="${cycles}"${
                (values.cycles ?? "1") === String(cycles) ? " checked" : ""
              }> ${cycles} ${unit}${cycles > 1 ? "s" : ""}</label>`,
          )
          .join("\n        ")}
        ${pauseError ? `<p class="field-error" id="field-cycles-error">${html(pauseError)}</p>` : ""}
      </fieldset>
      <p><button type="submit">Pause my gift</button></p>
    </form>
  </section>`;
  const methodSection = `<section aria-labelledby="method-title">
    <h2 id="method-title">Payment method</h2>
    <p>${method ? `Your payments are made with ${html(method.label)}.` : "No payment method is saved."}</p>
    <p><a href="${html(giftPath(session, donation.id, "payment-method"))}">Update the payment method</a></p>
  </section>`;
  const cancelSection = `<section aria-labelledby="cancel-title">
    <h2 id="cancel-title">Stop this gift</h2>
    <p><a href="${html(giftPath(session, donation.id, "cancel"))}">Cancel this gift</a></p>
  </section>`;
  const generalErrors = state.form && state.form !== "amount" && state.form !== "pause" ? [] : errors;
  return `${errorSummary(generalErrors)}<h1>${html(giftTitle(gift))}</h1>${notice}
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
  const { donation } = gift;
  const { money } = formatters(session);
  const error = errorsByField(state.errors ?? []).get("reason");
  return `${errorSummary(state.errors ?? [])}<h1>Cancel your gift?</h1>
  <p>Your gift of ${html(money(donation.amount, donation.currency))}${PER[donation.frequency ?? 0] ?? ""} to
    ${html(giftTitle(gift))} will stop. No further payment will be taken.</p>
  <form class="stack" method="post" action="${html(giftPath(session, donation.id, "cancel"))}" novalidate>
    ${csrfField(session)}
    <div class="field wide">
      <label for="field-reason">Why are you stopping? (optional)</label>
      <textarea id="field-reason" name="reason" rows="4" maxlength="${MAX_CANCEL_REASON}"${
        error ? ' aria-invalid="true" aria-describedby="field-reason-error"' : ""
      }>${html(state.values?.reason ?? "")}</textarea>
      ${error ? `<p class="field-error" id="field-reason-error">${html(error)}</p>` : ""}
    </div>
    <p><button type="submit">Yes, cancel my gift</button></p>
  </form>
  <p><a href="${html(giftPath(session, donation.id))}">No, keep my gift</a></p>`;
}

/** The sandbox card form (test card numbers decide what renewals do, as on the donation page). */
export function sandboxMethodBody(session: DonorSession, gift: DonorGiftView, state: GiftFormState = {}): string {
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
  return `${errorSummary(errors)}<h1>Update the payment method</h1>
  <p>For your gift to ${html(giftTitle(gift))}. ${donation.state === "past_due" ? "We will try the last payment again right away." : "Your next payment will use this card."}</p>
  <form class="stack" method="post" action="${html(giftPath(session, donation.id, "payment-method"))}" novalidate>
    ${csrfField(session)}
    <div class="fields">
      ${field("card_number", "Card number", { autocomplete: "cc-number", maxLength: 23, hint: "Test mode: use 4242 4242 4242 4242" })}
      ${field("exp_month", "Expiry month (MM)", { autocomplete: "cc-exp-month", maxLength: 2 })}
      ${field("exp_year", "Expiry year (YYYY)", { autocomplete: "cc-exp-year", maxLength: 4 })}
      ${field("cvc", "Security code", { autocomplete: "cc-csc", maxLength: 4 })}
    </div>
    <p><button type="submit">Save the card</button></p>
  </form>
  <p><a href="${html(giftPath(session, donation.id))}">Back to the gift</a></p>`;
}

const STYLE = readFileSync(new URL("../../../web/portal/portal.css", import.meta.url), "utf8");

/** JSON inside a script element: `<` escaped so the text can never close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/**
 * The Stripe payment-method page: Stripe's Payment Element in setup mode (the SetupIntent's client
 * secret), confirmed in the page with `stripe.confirmSetup`; the form then sends the SetupIntent id,
 * which the server asks Stripe about. A whole document: it loads Stripe.js, which the portal's other
 * pages never do.
 */
export function stripeMethodDocument(
  session: DonorSession,
  gift: DonorGiftView,
  setup: StripeSetup,
  nonce: string,
  state: GiftFormState = {},
): string {
  const { donation } = gift;
  const errors = state.errors ?? [];
  const body = `<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <div class="wrap">
    <p class="org"><a href="${html(portalPath(session.organizationSlug))}">${html(session.organizationName)}</a></p>
    <div class="who"><span>Signed in as <strong>${html(session.email)}</strong></span></div>
  </div>
</header>
<main id="main" class="wrap">
${errorSummary(errors)}<h1>Update the payment method</h1>
  <p>For your gift to ${html(giftTitle(gift))}. ${donation.state === "past_due" ? "We will try the last payment again right away." : "Your next payment will use this method."}</p>
  <form id="setup-form" class="stack" method="post" action="${html(giftPath(session, donation.id, "payment-method"))}" novalidate>
    ${csrfField(session)}
    <input type="hidden" name="setup_intent" value="">
    <div id="payment-element"></div>
    <p class="field-error" id="e-stripe" role="alert" hidden></p>
    <p><button type="submit" id="setup-submit">Save the payment method</button></p>
  </form>
  <p><a href="${html(giftPath(session, donation.id))}">Back to the gift</a></p>
</main>`;
  const config = scriptJson({ publishable_key: setup.publishableKey, client_secret: setup.clientSecret });
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
    const stripe = window.Stripe(config.publishable_key);
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
    title: `Update the payment method · ${session.organizationName}`,
    nonce,
    style: STYLE,
    head: `<meta name="robots" content="noindex">\n<script src="${escapeHtml(STRIPE_JS_URL)}" id="stripe-js" nonce="${nonce}" async></script>\n`,
    body,
    scripts,
  });
}
