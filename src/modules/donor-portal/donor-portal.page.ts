import type { ValidationIssue } from "../../errors/app-error.js";
import type { Locale } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";
import type { DonorDocument, DonorHome } from "./donor-portal.service.js";
import { CONSENT_FIELDS, CONTACT_FIELDS } from "./donor-portal.service.js";
import { type DonorSession, type PortalOrganization, portalPath } from "./donor-session.js";
import { csrfField, errorSummary, errorsByField, html, say, sayWith, textField } from "./portal.page.js";
import { portalFormat } from "./portal-i18n.js";

/** The sign-in form: an email, nothing else. Shown signed out, after an error and on a dead link. */
export function signInForm(
  organization: Pick<PortalOrganization, "slug">,
  locale: Locale,
  options: { email?: string; error?: string; next?: string } = {},
): string {
  const next = options.next ? `<input type="hidden" name="next" value="${html(options.next)}">` : "";
  return `<form class="stack" method="post" action="${html(portalPath(organization.slug, "sign-in"))}" novalidate>
    ${next}
    ${textField({
      name: "email",
      label: t(locale, "portal.sign_in.email_label"),
      type: "email",
      autocomplete: "email",
      value: options.email ?? "",
      maxLength: 320,
      hint: t(locale, "portal.sign_in.email_hint"),
      error: options.error,
      required: true,
    })}
    <button type="submit">${say(locale, "portal.sign_in.submit")}</button>
  </form>`;
}

export function signInBody(
  organization: PortalOrganization,
  locale: Locale,
  options: { email?: string; errors?: ValidationIssue[]; notice?: string; next?: string } = {},
): string {
  const errors = options.errors ?? [];
  const notice = options.notice ? `<p class="notice" role="status">${html(options.notice)}</p>` : "";
  return `${errorSummary(errors, locale)}${notice}
  <h1>${say(locale, "portal.sign_in.heading", { organization: organization.name })}</h1>
  <p>${say(locale, "portal.sign_in.intro")}</p>
  ${signInForm(organization, locale, { email: options.email, error: errorsByField(errors).get("email"), next: options.next })}`;
}

/** The same page whether or not the email belongs to a donor: it tells nobody which addresses are known. */
export function checkInboxBody(organization: PortalOrganization, locale: Locale): string {
  return `<h1>${say(locale, "portal.check_inbox.title")}</h1>
  <p class="notice" role="status">${say(locale, "portal.check_inbox.sent", { organization: organization.name })}</p>
  <p>${say(locale, "portal.check_inbox.expiry")}</p>
  <p><a href="${html(portalPath(organization.slug))}">${say(locale, "portal.check_inbox.other_address")}</a></p>`;
}

export function deadLinkBody(organization: PortalOrganization, locale: Locale, next?: string): string {
  return `<h1>${say(locale, "portal.dead_link.heading")}</h1>
  <p>${say(locale, "portal.dead_link.text")}</p>
  <h2>${say(locale, "portal.dead_link.new_link")}</h2>
  ${signInForm(organization, locale, { next })}`;
}

/** A gift's state as its badge says it (a paused gift: until when), and the badge's tone. */
export function giftStateLabel(
  locale: Locale,
  donation: { state: string; frequency: number | null; pausedUntil: Date | null },
  date: (value: Date) => string,
  now = new Date(),
): { label: string; tone: string } {
  const { state, pausedUntil } = donation;
  if ((state === "active" || state === "past_due") && pausedUntil && pausedUntil > now) {
    return { label: t(locale, "portal.state.paused", { date: date(pausedUntil) }), tone: "" };
  }
  const labels: Record<string, { key: string; tone: string }> = {
    pending: { key: "portal.state.pending", tone: "" },
    active: { key: "portal.state.active", tone: "good" },
    past_due: { key: "portal.state.past_due", tone: "bad" },
    done: { key: "portal.state.done", tone: "good" },
    revoked: { key: donation.frequency ? "portal.state.stopped" : "portal.state.refunded", tone: "" },
  };
  const found = labels[state];
  return found ? { label: t(locale, found.key), tone: found.tone } : { label: state, tone: "" };
}

const PAYMENT_STATE: Record<string, string> = {
  PENDING: "portal.payment_state.pending",
  PAID: "portal.payment_state.paid",
  FAILED: "portal.payment_state.failed",
  REFUNDED: "portal.payment_state.refunded",
};

export interface ContactFormState {
  values?: Record<string, string | boolean>;
  errors?: ValidationIssue[];
}

type Formats = ReturnType<typeof portalFormat>;

/**
 * The signed-in home: gifts, payments with receipts, yearly statements, the documents issued (receipts
 * and statements as numbered records), contact details, the data export.
 */
export function homeBody(
  session: DonorSession,
  home: DonorHome,
  options: { contact?: ContactFormState; notice?: string } = {},
): string {
  const { locale } = session;
  const format = portalFormat(locale, session.timeZone);
  const errors = options.contact?.errors ?? [];
  const notice = options.notice ? `<p class="notice" role="status" tabindex="-1">${html(options.notice)}</p>` : "";
  const name = home.contact?.firstName;
  return `${errorSummary(errors, locale)}${notice}
  <h1>${name ? say(locale, "portal.home.hello", { name }) : say(locale, "portal.home.title")}</h1>
  <p>${say(locale, "portal.home.intro", { organization: session.organizationName, email: session.email })}</p>
  ${giftsSection(session, home, format)}
  ${paymentsSection(locale, home, format)}
  ${statementsSection(locale, home)}
  ${documentsSection(locale, home, format)}
  ${contactSection(session, home, options.contact ?? {})}
  <section aria-labelledby="data-title">
    <h2 id="data-title">${say(locale, "portal.data.title")}</h2>
    <p>${say(locale, "portal.data.text", { organization: session.organizationName })}</p>
    <form method="post" action="${html(portalPath(session.organizationSlug, "export"))}">
      ${csrfField(session)}
      <button type="submit" class="secondary">${say(locale, "portal.data.download")}</button>
    </form>
  </section>`;
}

function giftsSection(session: DonorSession, home: DonorHome, format: Formats) {
  const { locale } = session;
  const { date } = format;
  if (home.gifts.length === 0) {
    return `<section aria-labelledby="gifts-title">
    <h2 id="gifts-title">${say(locale, "portal.home.gifts_title")}</h2>
    <p>${say(locale, "portal.home.no_gifts")}</p>
  </section>`;
  }
  const items = home.gifts.map(({ donation, campaignTitle }) => {
    const frequency = donation.frequency ?? 0;
    const state = giftStateLabel(locale, donation, date);
    const next =
      (donation.state === "active" || donation.state === "past_due") && donation.nextChargeDate
        ? `<p>${say(locale, "portal.gift_card.next_payment", { date: date(donation.nextChargeDate) })}</p>`
        : "";
    const title = campaignTitle || t(locale, "portal.gift_card.default_title");
    const actions = [
      frequency > 0
        ? `<a href="${html(portalPath(session.organizationSlug, `gifts/${donation.id}`))}">${say(locale, "portal.gift_card.manage")}<span class="visually-hidden"> (${html(donation.code)})</span></a>`
        : "",
      donation.receiptUrl
        ? `<a href="${html(donation.receiptUrl)}">${say(locale, "portal.gift_card.receipt")}<span class="visually-hidden"> ${say(locale, "portal.gift_card.receipt_of_gift", { code: donation.code })}</span></a>`
        : "",
    ].filter(Boolean);
    return `<li class="card">
      <h3>${html(title)}</h3>
      <p><span class="amount">${html(format.perPeriod(donation.amount, donation.currency, frequency))}</span>
        ${frequency === 0 ? `· ${say(locale, "portal.frequency.one_off")} ` : ""}· <span class="badge ${state.tone}">${html(state.label)}</span></p>
      <p class="muted">${say(locale, frequency > 0 ? "portal.gift_card.started_recurring" : "portal.gift_card.started_one_off", { date: date(donation.createDate) })} · ${html(donation.code)}</p>
      ${next}
      ${actions.length > 0 ? `<p class="actions">${actions.join("\n        ")}</p>` : ""}
    </li>`;
  });
  return `<section aria-labelledby="gifts-title">
    <h2 id="gifts-title">${say(locale, "portal.home.gifts_title")}</h2>
    <ul class="cards">
    ${items.join("\n    ")}
    </ul>
  </section>`;
}

function paymentsSection(locale: Locale, home: DonorHome, format: Formats) {
  const { date, money } = format;
  const rows = home.gifts
    .flatMap((gift) => gift.payments.map((payment) => ({ gift, payment })))
    .sort(
      (a, b) =>
        (b.payment.paymentDate ?? b.payment.createDate).getTime() -
          (a.payment.paymentDate ?? a.payment.createDate).getTime() || b.payment.id - a.payment.id,
    );
  if (rows.length === 0) {
    return `<section aria-labelledby="payments-title">
    <h2 id="payments-title">${say(locale, "portal.payments.title")}</h2>
    <p>${say(locale, "portal.payments.none")}</p>
  </section>`;
  }
  const items = rows.map(({ gift, payment }) => {
    const when = date(payment.paymentDate ?? payment.createDate);
    const receipt =
      gift.donation.receiptUrl && (payment.state === "PAID" || payment.state === "REFUNDED")
        ? ` · <a href="${html(gift.donation.receiptUrl)}">${say(locale, "portal.gift_card.receipt")}<span class="visually-hidden"> ${say(locale, "portal.payments.receipt_of_payment", { date: when, id: String(payment.id) })}</span></a>`
        : "";
    const stateKey = PAYMENT_STATE[payment.state];
    const state = stateKey ? t(locale, stateKey) : payment.state;
    return `<li class="card">
      <p><span class="amount">${html(money(payment.amount, payment.currency))}</span> · ${html(when)}
        · <span class="badge${payment.state === "FAILED" ? " bad" : ""}">${html(state)}</span>${receipt}</p>
      <p class="muted">${html(gift.campaignTitle || t(locale, "portal.gift_card.default_title"))} · ${html(gift.donation.code)}</p>
    </li>`;
  });
  return `<section aria-labelledby="payments-title">
    <h2 id="payments-title">${say(locale, "portal.payments.title")}</h2>
    <ul class="cards">
    ${items.join("\n    ")}
    </ul>
  </section>`;
}

/**
 * Each year's gifts, as a page drawn live from the payments: the years whose statement was issued
 * (a numbered document, under Your documents) are not listed again here.
 */
function statementsSection(locale: Locale, home: DonorHome) {
  const issued = new Set(
    home.documents
      .filter((document) => document.kind === "statement" && !document.voidDate)
      .map((document) => document.year),
  );
  const statements = home.statements.filter((statement) => !issued.has(statement.year));
  if (statements.length === 0 && issued.size > 0) return "";
  const body =
    statements.length === 0
      ? `<p>${say(locale, "portal.statements.none")}</p>`
      : `<p>${say(locale, "portal.statements.intro")}</p>
    <ul class="plain">
      ${statements.map((statement) => `<li><a href="${html(statement.url)}">${say(locale, "portal.statements.link", { year: String(statement.year) })}</a></li>`).join("\n      ")}
    </ul>`;
  return `<section aria-labelledby="statements-title">
    <h2 id="statements-title">${say(locale, "portal.statements.title")}</h2>
    ${body}
  </section>`;
}

/** What a void document's badge says, after "Void": why it was voided, if the reason is known. */
const VOID_REASON: Record<string, string> = {
  refunded: "portal.documents.void_reason.refunded",
  partially_refunded: "portal.documents.void_reason.partially_refunded",
  disputed: "portal.documents.void_reason.disputed",
  partially_disputed: "portal.documents.void_reason.partially_disputed",
};

function documentCard(locale: Locale, document: DonorDocument, format: Formats) {
  const { code } = document;
  const statement = document.kind === "statement";
  const year = String(document.year);
  const viewOf = statement ? "portal.documents.view_of.statement" : "portal.documents.view_of.payment";
  const pdfOf = statement ? "portal.documents.pdf_of.statement" : "portal.documents.pdf_of.payment";
  const title = statement
    ? say(locale, "portal.documents.kind.statement", { year })
    : say(locale, "portal.documents.kind.payment");
  const when = statement
    ? say(locale, "portal.documents.of_year", { year })
    : say(locale, "portal.documents.gift_date", { date: format.date(document.giftDate) });
  let state = "";
  if (document.voidDate) {
    const reasonKey = document.voidReason ? VOID_REASON[document.voidReason] : undefined;
    const badge = say(locale, statement ? "portal.documents.void.statement" : "portal.documents.void.payment");
    state = ` · <span class="badge bad">${badge}</span>${reasonKey ? ` <span>${say(locale, reasonKey)}</span>` : ""}`;
  }
  const reference = document.reference ? ` · ${html(document.reference)}` : "";
  return `<li class="card">
      <h3>${title}</h3>
      <p><span class="amount">${html(format.money(document.amount, document.currency))}</span> · ${when}${state}</p>
      <p class="muted">${say(locale, "portal.documents.number", { code })}${reference}</p>
      <p class="actions"><a href="${html(document.url)}">${say(locale, "portal.documents.view")}<span class="visually-hidden"> ${say(locale, viewOf, { code })}</span></a>
        <a href="${html(document.pdfUrl)}">${say(locale, "portal.documents.pdf")}<span class="visually-hidden"> ${say(locale, pdfOf, { code })}</span></a></p>
    </li>`;
}

/** The receipts and yearly statements issued to the donor, void ones marked, each with its page and PDF. */
function documentsSection(locale: Locale, home: DonorHome, format: Formats) {
  const body =
    home.documents.length === 0
      ? `<p>${say(locale, "portal.documents.none")}</p>`
      : `<p>${say(locale, "portal.documents.intro")}</p>
    <ul class="cards">
    ${home.documents.map((document) => documentCard(locale, document, format)).join("\n    ")}
    </ul>`;
  return `<section aria-labelledby="documents-title">
    <h2 id="documents-title">${say(locale, "portal.documents.title")}</h2>
    ${body}
  </section>`;
}

function contactSection(session: DonorSession, home: DonorHome, state: ContactFormState) {
  const { locale } = session;
  const contact = home.contact;
  if (!contact) return "";
  const stored: Record<string, string | boolean> = {
    first_name: contact.firstName ?? "",
    last_name: contact.lastName ?? "",
    phone: contact.phone ?? "",
    address: contact.address ?? "",
    address2: contact.address2 ?? "",
    postal_code: contact.postalCode ?? "",
    city: contact.city ?? "",
    locality: contact.locality ?? "",
    country: contact.country ?? "",
    email_marketing: contact.emailMarketing === true,
    phone_marketing: contact.phoneMarketing === true,
    sms_marketing: contact.smsMarketing === true,
    postal_marketing: contact.postalMarketing === true,
  };
  const values = state.values ?? stored;
  const errors = errorsByField(state.errors ?? []);
  const wide = new Set(["address", "address2"]);
  const fields = CONTACT_FIELDS.map((field) =>
    textField({
      name: field.name,
      label: t(locale, `portal.contact.fields.${field.name}`),
      value: String(values[field.name] ?? ""),
      type: "type" in field ? field.type : "text",
      autocomplete: field.autocomplete,
      // The country's code is checked by the server, which says what it wants (a browser would just cut "Italy").
      maxLength: field.name === "country" ? undefined : field.maxLength,
      hint: field.name === "country" ? t(locale, "portal.contact.country_hint") : undefined,
      error: errors.get(field.name),
      wide: wide.has(field.name),
    }),
  ).join("\n      ");
  const consents = CONSENT_FIELDS.map(
    (field) => `<label class="check" for="field-${field.name}">
        <input type="checkbox" id="field-${field.name}" name="${field.name}" value="yes"${values[field.name] === true ? " checked" : ""}>
        ${say(locale, `portal.contact.consents.${field.name}`)}
      </label>`,
  ).join("\n      ");
  const email = `<strong>${html(session.email)}</strong>`;
  return `<section aria-labelledby="contact-title">
    <h2 id="contact-title">${say(locale, "portal.contact.title")}</h2>
    <p>${sayWith(locale, "portal.contact.email_note", { organization: session.organizationName }, "email", email)}</p>
    <form class="stack" method="post" action="${html(portalPath(session.organizationSlug, "contact"))}" novalidate>
      ${csrfField(session)}
      <div class="fields">
      ${fields}
      </div>
      <fieldset>
        <legend>${say(locale, "portal.contact.consents_legend", { organization: session.organizationName })}</legend>
        <p class="hint">${say(locale, "portal.contact.consents_hint")}</p>
      ${consents}
      </fieldset>
      <button type="submit">${say(locale, "portal.contact.submit")}</button>
    </form>
  </section>`;
}
