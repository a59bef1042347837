import type { ValidationIssue } from "../../errors/app-error.js";
import { formatMoney } from "../../payments/money.js";
import type { DonorHome } from "./donor-portal.service.js";
import { CONSENT_FIELDS, CONTACT_FIELDS } from "./donor-portal.service.js";
import { type DonorSession, type PortalOrganization, portalPath } from "./donor-session.js";
import { csrfField, errorSummary, errorsByField, html, textField } from "./portal.page.js";

/** The sign-in form: an email, nothing else. Shown signed out, after an error and on a dead link. */
export function signInForm(
  organization: Pick<PortalOrganization, "slug">,
  options: { email?: string; error?: string; next?: string } = {},
): string {
  const next = options.next ? `<input type="hidden" name="next" value="${html(options.next)}">` : "";
  return `<form class="stack" method="post" action="${html(portalPath(organization.slug, "sign-in"))}" novalidate>
    ${next}
    ${textField({
      name: "email",
      label: "Your email address",
      type: "email",
      autocomplete: "email",
      value: options.email ?? "",
      maxLength: 320,
      hint: "The address you gave with your donation.",
      error: options.error,
      required: true,
    })}
    <button type="submit">Email me a sign-in link</button>
  </form>`;
}

export function signInBody(
  organization: PortalOrganization,
  options: { email?: string; errors?: ValidationIssue[]; notice?: string; next?: string } = {},
): string {
  const errors = options.errors ?? [];
  const notice = options.notice ? `<p class="notice" role="status">${html(options.notice)}</p>` : "";
  return `${errorSummary(errors)}${notice}
  <h1>Your donations to ${html(organization.name)}</h1>
  <p>See your gifts and receipts, download your yearly statements, manage your recurring donations and update your
  contact details. Enter your email address and we will send you a link to sign in: no password needed.</p>
  ${signInForm(organization, { email: options.email, error: errorsByField(errors).get("email"), next: options.next })}`;
}

/** The same page whether or not the email belongs to a donor: it tells nobody which addresses are known. */
export function checkInboxBody(organization: PortalOrganization): string {
  return `<h1>Check your inbox</h1>
  <p class="notice" role="status">If this address belongs to a donor of ${html(organization.name)}, we have just sent it
  a sign-in link.</p>
  <p>The link works once, for 15 minutes. It can take a minute or two to arrive; look in your spam folder too.</p>
  <p><a href="${html(portalPath(organization.slug))}">Use another email address</a></p>`;
}

export function deadLinkBody(organization: PortalOrganization, next?: string): string {
  return `<h1>This sign-in link no longer works</h1>
  <p>Sign-in links work once, for 15 minutes (links in receipt emails for 30 days). This one has expired, was
  already used, or was copied incompletely.</p>
  <h2>Get a new link</h2>
  ${signInForm(organization, { next })}`;
}

const PER: Record<number, string> = { 1: " a year", 12: " a month" };

function giftState(state: string, frequency: number, pausedUntil: Date | null, date: (d: Date) => string) {
  if ((state === "active" || state === "past_due") && pausedUntil && pausedUntil > new Date()) {
    return { label: `Paused until ${date(pausedUntil)}`, tone: "" };
  }
  const labels: Record<string, { label: string; tone: string }> = {
    pending: { label: "Awaiting payment", tone: "" },
    active: { label: "Active", tone: "good" },
    past_due: { label: "Last payment failed", tone: "bad" },
    done: { label: "Received", tone: "good" },
    revoked: { label: frequency > 0 ? "Stopped" : "Refunded or cancelled", tone: "" },
  };
  return labels[state] ?? { label: state, tone: "" };
}

const PAYMENT_STATE: Record<string, string> = {
  PENDING: "Pending",
  PAID: "Paid",
  FAILED: "Failed",
  REFUNDED: "Refunded",
};

export interface ContactFormState {
  values?: Record<string, string | boolean>;
  errors?: ValidationIssue[];
}

/** The signed-in home: gifts, payments with receipts, yearly statements, contact details, the data export. */
export function homeBody(
  session: DonorSession,
  home: DonorHome,
  options: { contact?: ContactFormState; notice?: string } = {},
): string {
  const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeZone: session.timeZone });
  const date = (value: Date) => day.format(value);
  const money = (amount: number, currency: string) => formatMoney(amount, currency);
  const errors = options.contact?.errors ?? [];
  const notice = options.notice ? `<p class="notice" role="status" tabindex="-1">${html(options.notice)}</p>` : "";
  const name = home.contact?.firstName;
  return `${errorSummary(errors)}${notice}
  <h1>${name ? `Hello ${html(name)}` : "Your donations"}</h1>
  <p>Your gifts to ${html(session.organizationName)} under ${html(session.email)}.</p>
  ${giftsSection(session, home, date, money)}
  ${paymentsSection(home, date, money)}
  ${statementsSection(home)}
  ${contactSection(session, home, options.contact ?? {})}
  <section aria-labelledby="data-title">
    <h2 id="data-title">Your data</h2>
    <p>Download everything ${html(session.organizationName)} holds about you under this email address, as a JSON file.</p>
    <form method="post" action="${html(portalPath(session.organizationSlug, "export"))}">
      ${csrfField(session)}
      <button type="submit" class="secondary">Download my data</button>
    </form>
  </section>`;
}

function giftsSection(
  session: DonorSession,
  home: DonorHome,
  date: (value: Date) => string,
  money: (amount: number, currency: string) => string,
) {
  if (home.gifts.length === 0) {
    return `<section aria-labelledby="gifts-title">
    <h2 id="gifts-title">Your gifts</h2>
    <p>There are no gifts under this email address yet.</p>
  </section>`;
  }
  const items = home.gifts.map(({ donation, campaignTitle }) => {
    const frequency = donation.frequency ?? 0;
    const state = giftState(donation.state, frequency, donation.pausedUntil, date);
    const next =
      (donation.state === "active" || donation.state === "past_due") && donation.nextChargeDate
        ? `<p>Next payment: ${html(date(donation.nextChargeDate))}</p>`
        : "";
    const title = campaignTitle || "Donation";
    const actions = [
      frequency > 0
        ? `<a href="${html(portalPath(session.organizationSlug, `gifts/${donation.id}`))}">Manage this gift<span class="visually-hidden"> (${html(donation.code)})</span></a>`
        : "",
      donation.receiptUrl
        ? `<a href="${html(donation.receiptUrl)}">Receipt<span class="visually-hidden"> for ${html(donation.code)}</span></a>`
        : "",
    ].filter(Boolean);
    return `<li class="card">
      <h3>${html(title)}</h3>
      <p><span class="amount">${html(money(donation.amount, donation.currency))}${PER[frequency] ?? ""}</span>
        ${frequency === 0 ? "· One-off " : ""}· <span class="badge ${state.tone}">${html(state.label)}</span></p>
      <p class="muted">Started ${html(date(donation.createDate))} · ${html(donation.code)}</p>
      ${next}
      ${actions.length > 0 ? `<p class="actions">${actions.join("\n        ")}</p>` : ""}
    </li>`;
  });
  return `<section aria-labelledby="gifts-title">
    <h2 id="gifts-title">Your gifts</h2>
    <ul class="cards">
    ${items.join("\n    ")}
    </ul>
  </section>`;
}

function paymentsSection(
  home: DonorHome,
  date: (value: Date) => string,
  money: (amount: number, currency: string) => string,
) {
  const rows = home.gifts
    .flatMap((gift) => gift.payments.map((payment) => ({ gift, payment })))
    .sort(
      (a, b) =>
        (b.payment.paymentDate ?? b.payment.createDate).getTime() -
          (a.payment.paymentDate ?? a.payment.createDate).getTime() || b.payment.id - a.payment.id,
    );
  if (rows.length === 0) {
    return `<section aria-labelledby="payments-title">
    <h2 id="payments-title">Payments and receipts</h2>
    <p>No payments yet.</p>
  </section>`;
  }
  const items = rows.map(({ gift, payment }) => {
    const when = date(payment.paymentDate ?? payment.createDate);
    const receipt =
      gift.donation.receiptUrl && (payment.state === "PAID" || payment.state === "REFUNDED")
        ? ` · <a href="${html(gift.donation.receiptUrl)}">Receipt<span class="visually-hidden"> of ${html(when)}, payment ${payment.id}</span></a>`
        : "";
    return `<li class="card">
      <p><span class="amount">${html(money(payment.amount, payment.currency))}</span> · ${html(when)}
        · <span class="badge${payment.state === "FAILED" ? " bad" : ""}">${html(PAYMENT_STATE[payment.state] ?? payment.state)}</span>${receipt}</p>
      <p class="muted">${html(gift.campaignTitle || "Donation")} · ${html(gift.donation.code)}</p>
    </li>`;
  });
  return `<section aria-labelledby="payments-title">
    <h2 id="payments-title">Payments and receipts</h2>
    <ul class="cards">
    ${items.join("\n    ")}
    </ul>
  </section>`;
}

function statementsSection(home: DonorHome) {
  const body =
    home.statements.length === 0
      ? "<p>Your yearly statement appears here once a payment has been received.</p>"
      : `<p>A statement of the donations received in a year, for your tax return.</p>
    <ul class="plain">
      ${home.statements.map((statement) => `<li><a href="${html(statement.url)}">Statement for ${statement.year}</a></li>`).join("\n      ")}
    </ul>`;
  return `<section aria-labelledby="statements-title">
    <h2 id="statements-title">Yearly statements</h2>
    ${body}
  </section>`;
}

function contactSection(session: DonorSession, home: DonorHome, state: ContactFormState) {
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
      label: field.label,
      value: String(values[field.name] ?? ""),
      type: "type" in field ? field.type : "text",
      autocomplete: field.autocomplete,
      // The country's code is checked by the server, which says what it wants (a browser would just cut "Italy").
      maxLength: field.name === "country" ? undefined : field.maxLength,
      hint: "hint" in field ? field.hint : undefined,
      error: errors.get(field.name),
      wide: wide.has(field.name),
    }),
  ).join("\n      ");
  const consents = CONSENT_FIELDS.map(
    (field) => `<label class="check" for="field-${field.name}">
        <input type="checkbox" id="field-${field.name}" name="${field.name}" value="yes"${values[field.name] === true ? " checked" : ""}>
        ${html(field.label)}
      </label>`,
  ).join("\n      ");
  return `<section aria-labelledby="contact-title">
    <h2 id="contact-title">Contact details</h2>
    <p>Your email address is <strong>${html(session.email)}</strong>. To change it, write to ${html(session.organizationName)}.</p>
    <form class="stack" method="post" action="${html(portalPath(session.organizationSlug, "contact"))}" novalidate>
      ${csrfField(session)}
      <div class="fields">
      ${fields}
      </div>
      <fieldset>
        <legend>How ${html(session.organizationName)} may keep you informed about its work</legend>
        <p class="hint">Receipts and messages about your gifts are always sent by email.</p>
      ${consents}
      </fieldset>
      <button type="submit">Save contact details</button>
    </form>
  </section>`;
}
