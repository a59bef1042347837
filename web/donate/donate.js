/*
 * The page's behaviour, kept small and framework-free. The first chosen amount opens a checkout
 * (its id and client secret stay in memory only); each submission completes it with a fresh
 * Idempotency-Key, except a retry of the very same submission after a network failure or a 5xx
 * (a processor timeout), which reuses its key so the server can never charge twice.
 *
 * When the organization takes payments with Stripe (config.stripe), Stripe's Payment Element
 * replaces the card fields: the page never sees card or bank details, only a confirmation token
 * minted by Stripe.js (stripe.createConfirmationToken), which the completion sends. A 202
 * requires_action (3-D Secure) runs stripe.handleNextAction in the page, then sends the same
 * body again under the same key, and the server answers with the outcome.
 */
(() => {
  const config = JSON.parse(document.getElementById("donate-config").textContent);
  const form = /** @type {HTMLFormElement} */ (document.getElementById("donate-form"));
  // The page's own controls; every one the script names is rendered with it (donate-page.ts).
  const byId = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
  const one = (/** @type {ParentNode} */ root, /** @type {string} */ selector) =>
    /** @type {HTMLInputElement | null} */ (root.querySelector(selector));
  const all = (/** @type {ParentNode} */ root, /** @type {string} */ selector) =>
    /** @type {NodeListOf<HTMLInputElement>} */ (root.querySelectorAll(selector));
  const api = `/api/v1/public/organizations/${encodeURIComponent(config.organization.slug)}`;
  // The words come from the server's catalog in the page's language (src/i18n/catalogs/, donate.script):
  // plain {name} arguments, filled here; a server's refusal is shown by its code (config.errors), never its text.
  const say = (/** @type {string} */ key, /** @type {Record<string, unknown>} */ values = {}) =>
    String(config.messages[key] ?? key).replace(/\{(\w+)\}/g, (whole, name) =>
      Object.hasOwn(values, name) ? String(values[name]) : whole,
    );
  const refusal = (problem, /** @type {string} */ fallback) =>
    (problem && typeof problem.code === "string" && config.errors[problem.code]) || say(fallback);
  const formatters = {};
  const money = (amount) => {
    const key = Number.isInteger(amount) ? "whole" : "cents";
    if (!formatters[key]) {
      const digits = key === "whole" ? { minimumFractionDigits: 0, maximumFractionDigits: 0 } : {};
      formatters[key] = new Intl.NumberFormat(config.locale, {
        style: "currency",
        currency: config.currency,
        ...digits,
      });
    }
    return formatters[key].format(amount);
  };
  // Framed by embed.js on a site the organization allows (docs/embed.md): messages go to that site only.
  // The frame's ancestor is known where browsers tell it; elsewhere each allowed origin is tried, and
  // the browser delivers to the one that is the parent (frame-ancestors admits no other).
  const framed = window.parent !== window;
  const tellHost = (message) => {
    if (!framed) return;
    const origins = /** @type {string[]} */ (config.embed_origins || []);
    const ancestor = location.ancestorOrigins?.[0];
    for (const origin of ancestor && origins.includes(ancestor) ? [ancestor] : origins) {
      window.parent.postMessage(message, origin);
    }
  };
  const cents = (amount) => Math.round(amount * 100);
  // The currency's smallest amount in cents: 1 for EUR, 100 for JPY (no minor unit).
  const unitCents = 10 ** (2 - config.amount_decimals);
  // The server's formula (src/payments/cover-fee.ts) in whole cents, so the figure shown is the one charged.
  const coverFeeCents = (giftCents) =>
    Math.floor((giftCents * Math.round(config.cover_fee.percent * 100) + 5000 * unitCents) / (10000 * unitCents)) *
      unitCents +
    cents(config.cover_fee.fixed);
  // Stripe.js takes amounts in Stripe's units of the currency (yen for JPY, fils for KWD), not in cents.
  const stripeAmount = (totalCents) => Math.round(totalCents * 10 ** ((config.stripe?.amount_decimals ?? 2) - 2));
  const coverFeeBox = byId("cover-fee");
  const covered = () => Boolean(coverFeeBox?.checked);

  let checkout = null;
  let starting = null;
  let challengeLoad = null;
  let challengeWidget = null;
  let challengePayload = null;
  let failedAttempt = null;
  let busy = false;
  let stripe = null;
  let elements = null;
  let stripeLoad = null;
  let stripeFailed = false;
  let elementsSent = null;

  const frequency = () => {
    const checked = one(form, "input[name=frequency]:checked");
    return checked ? Number(checked.value) : 0;
  };
  const rules = () => config.amounts[frequency() === 0 ? "one_off" : "recurring"];
  const asksGroup = () => one(form, `[data-asks=${frequency() === 0 ? "one_off" : "recurring"}]`);
  const customInput = byId("custom-amount");
  const processor = () => {
    const checked = one(form, "input[name=processor]:checked");
    return checked ? checked.value : null;
  };
  const cardFields = document.getElementById("card-fields");
  const stripeFields = document.getElementById("stripe-fields");

  function amount() {
    const ask = one(asksGroup(), "input:checked");
    if (ask) return Number(ask.value);
    if (rules().custom && customInput.value.trim() !== "") {
      const value = Number(customInput.value);
      return Number.isFinite(value) ? value : NaN;
    }
    return null;
  }

  function amountProblem(value) {
    const r = rules();
    if (value === null) return say("choose_amount");
    if (!Number.isFinite(value) || value <= 0) return say("amount_example");
    if (Math.abs(value * 100 - Math.round(value * 100)) > 1e-6) return say("two_decimals");
    if (cents(value) % unitCents !== 0) return say("whole_units", { currency: config.currency });
    if (r.min !== null && cents(value) < cents(r.min)) return say("min", { amount: money(r.min) });
    if (r.max !== null && cents(value) > cents(r.max)) return say("max", { amount: money(r.max) });
    return null;
  }

  function refresh() {
    const value = amount();
    const valid = value !== null && amountProblem(value) === null;
    const button = byId("submit");
    const fee = valid && config.cover_fee ? coverFeeCents(cents(value)) : 0;
    if (coverFeeBox) {
      byId("cover-fee-label").textContent = valid
        ? say("cover_fee_amount", { amount: money(fee / 100) })
        : say("cover_fee");
    }
    const total = valid ? (cents(value) + (covered() ? fee : 0)) / 100 : null;
    if (valid) updateElements(stripeAmount(Math.round(total * 100)));
    if (!busy) button.textContent = valid ? say(`submit_${frequency()}`, { amount: money(total) }) : say("submit");
    const example = byId("cost-example");
    if (example && config.cost_example) {
      const unit = config.cost_example.amount;
      const label = config.cost_example.label;
      const quantity = valid ? Math.floor(cents(value) / cents(unit)) : 0;
      // "€10 = one school kit", and for more than one "€25 = 2 × school kit".
      example.textContent =
        quantity >= 2
          ? say("cost_many", { amount: money(value), quantity, label: label.replace(/^(one|a|an|un|una|uno) /i, "") })
          : say("cost_one", { amount: money(quantity === 1 ? value : unit), label });
    }
  }

  function applyFrequency() {
    const recurring = frequency() !== 0;
    const r = rules();
    for (const group of all(form, "[data-asks]")) {
      group.hidden = group.getAttribute("data-asks") !== (recurring ? "recurring" : "one_off");
    }
    byId("custom-wrap").hidden = !r.custom;
    if (!r.custom) customInput.value = "";
    else if (customInput.value.trim() !== "") for (const ask of all(asksGroup(), "input")) ask.checked = false;
    customInput.min = r.min === null ? "0.01" : String(r.min);
    if (r.max === null) customInput.removeAttribute("max");
    else customInput.max = String(r.max);
    const min = r.min !== null ? money(r.min) : null;
    const max = r.max !== null ? money(r.max) : null;
    byId("custom-hint").textContent =
      min && max
        ? say("range_both", { min, max })
        : min
          ? say("range_from", { min })
          : max
            ? say("range_to", { max })
            : "";
    for (const p of config.processors) {
      const radio = byId(`processor-${p.name}`);
      if (!radio) continue;
      radio.disabled = recurring ? !p.recurring : !p.one_off;
      if (radio.disabled && radio.checked) {
        radio.checked = false;
        const other = one(form, "input[name=processor]:not(:disabled)");
        if (other) other.checked = true;
      }
    }
    byId("manual-one-off").hidden = !(recurring && byId("processor-manual"));
    applyProcessor();
    refresh();
  }

  function applyProcessor() {
    const card = processor() === "sandbox";
    if (cardFields) {
      cardFields.hidden = !card;
      for (const input of all(cardFields, "input")) input.disabled = !card;
    }
    if (stripeFields) stripeFields.hidden = processor() !== "stripe";
    byId("manual-note").hidden = processor() !== "manual";
  }

  /**
   * Stripe's Payment Element: Stripe.js comes from js.stripe.com (the page's async script tag),
   * the element is created in deferred-intent mode with the amount the donor will be charged
   * (gift plus covered fee, in Stripe's units of the currency) and, for a recurring gift, setupFutureUsage off_session so
   * the method is saved for renewals (and SEPA shows its mandate text).
   */
  function loadStripe() {
    if (stripeLoad) return stripeLoad;
    const w = /** @type {any} */ (window);
    stripeLoad = new Promise((resolve, reject) => {
      if (w.Stripe) return resolve(w.Stripe);
      const tag = document.getElementById("stripe-js");
      tag.addEventListener("load", () => (w.Stripe ? resolve(w.Stripe) : reject(new Error("Stripe.js missing"))));
      tag.addEventListener("error", () => reject(new Error("Stripe.js not loaded")));
    }).then((StripeJs) => {
      stripe = StripeJs(config.stripe.publishable_key, { locale: config.locale });
      const options = {
        mode: "payment",
        currency: config.currency.toLowerCase(),
        amount: stripeAmount(initialCents()),
      };
      if (frequency() !== 0) options.setupFutureUsage = "off_session";
      elements = stripe.elements(options);
      elementsSent = { amount: options.amount, setupFutureUsage: options.setupFutureUsage || null };
      const element = elements.create("payment", { layout: "tabs" });
      // Stripe could not show its form (a wrong key, Stripe unreachable): say so where the form would be.
      element.on("loaderror", (event) => {
        const slot = byId("e-stripe");
        slot.textContent = event?.error?.message || say("stripe_failed");
        slot.hidden = false;
      });
      byId("payment-element").textContent = "";
      element.mount("#payment-element");
      refresh();
      return elements;
    });
    stripeLoad.catch(() => {
      stripeFailed = true;
      const slot = byId("e-stripe");
      slot.textContent = say("stripe_offline");
      slot.hidden = false;
    });
    return stripeLoad;
  }

  /** The element needs an amount from the start: the chosen one, else the campaign's default or minimum. */
  function initialCents() {
    const value = amount();
    if (value !== null && amountProblem(value) === null) {
      const fee = config.cover_fee && covered() ? coverFeeCents(cents(value)) : 0;
      return cents(value) + fee;
    }
    const r = rules();
    return cents(r.default ?? r.min ?? 1);
  }

  /** Keeps the element's amount and future usage in step with the form (wallet sheets and the mandate show them). */
  function updateElements(total) {
    if (!elements) return;
    const setupFutureUsage = frequency() === 0 ? null : "off_session";
    if (elementsSent.amount === total && elementsSent.setupFutureUsage === setupFutureUsage) return;
    elementsSent = { amount: total, setupFutureUsage };
    elements.update({ amount: total, setupFutureUsage });
  }

  function clearErrors() {
    byId("form-error").hidden = true;
    byId("form-error").textContent = "";
    for (const p of all(form, ".field-error")) {
      p.hidden = true;
      p.textContent = "";
    }
    for (const input of all(form, "[aria-invalid]")) input.removeAttribute("aria-invalid");
  }

  /** Shows a message under the input (or group) of an API field name such as "supporter.email". */
  function fieldError(field, message) {
    const name = field && field.indexOf("card") === 0 && !one(form, `[data-field="${field}"]`) ? "card.number" : field;
    const holder = name && one(form, `[data-field="${name}"]`);
    if (!holder) return null;
    const slot = one(holder, ".field-error");
    slot.textContent = message;
    slot.hidden = false;
    const control = one(holder, "input:not([type=radio]), select, textarea") || one(holder, "input:not(:disabled)");
    if (control) control.setAttribute("aria-invalid", "true");
    return control;
  }

  function showAlert(message) {
    const box = byId("form-error");
    box.textContent = message;
    box.hidden = false;
    box.focus();
  }

  /** A refusal of the server: its code's message, and under each field it names the catalog's word for it. */
  function showProblem(problem, fallback) {
    let first = null;
    const code = problem?.code;
    const fieldMessage =
      code === "missing_required_field"
        ? say("fill_field")
        : code === "privacy_consent_required"
          ? say("tick_box")
          : say("check_field");
    for (const issue of problem?.errors || []) {
      const control = fieldError(issue.field || issue.parameter, fieldMessage);
      first = first || control;
    }
    showAlert(refusal(problem, fallback));
    if (first) first.focus();
  }

  /** A problem with the Stripe payment: under the Payment Element and in the alert. */
  function stripeProblem(message, advice) {
    const slot = byId("e-stripe");
    slot.textContent = advice ? `${message} ${advice}` : message;
    slot.hidden = false;
    showAlert(message || say("payment_not_completed"));
  }

  async function post(url, body, headers) {
    const response = await fetch(url, {
      method: "POST",
      headers: Object.assign(
        { "content-type": "application/json", accept: "application/json", "accept-language": config.locale },
        headers || {},
      ),
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
    const url = `${api}/campaigns/${encodeURIComponent(config.campaign)}/checkouts/`;
    starting = post(url, { amount: value, frequency: frequency() })
      .then((response) => {
        if (response.status === 201) {
          checkout = { id: response.body.id, secret: response.body.client_secret };
          return checkout;
        }
        throw Object.assign(new Error("checkout not started"), { problem: response.body });
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
      if (error.problem) showProblem(error.problem, "amount_refused");
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
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  function validate() {
    let first = null;
    const problem = amountProblem(amount());
    if (problem) first = fieldError("amount", problem) || customInput;
    for (const control of all(form, "input, select, textarea")) {
      if (control.disabled || control.type === "radio" || control === customInput || control.checkValidity()) continue;
      const holder = control.closest("[data-field]");
      const message = control.validity.valueMissing
        ? control.type === "checkbox"
          ? say("tick_box")
          : say("fill_field")
        : control.validationMessage;
      if (holder) fieldError(holder.getAttribute("data-field"), message);
      first = first || control;
    }
    if (!processor()) first = first || fieldError("processor", say("choose_processor"));
    // A required choice among options: radios are not checked above, and a list of boxes has no `required`.
    for (const group of all(form, "fieldset[data-answer][data-required]")) {
      if (one(group, "input:checked")) continue;
      const control = fieldError(group.getAttribute("data-field"), say("fill_field"));
      first = first || control;
    }
    return first;
  }

  /** The tribute's fields open with their box, and are only checked and sent while open. */
  function applyTribute() {
    const on = byId("tribute-on")?.checked ?? false;
    const notify = on && (byId("tribute-notify")?.checked ?? false);
    byId("tribute-fields").hidden = !on;
    byId("tribute-notify-fields").hidden = !notify;
    for (const control of all(byId("tribute-fields"), "input, textarea")) {
      const inNotice = Boolean(control.closest("#tribute-notify-fields"));
      control.disabled = inNotice ? !notify : !on;
    }
  }

  /** The tribute as the completion takes it, or undefined when the gift is not dedicated. */
  function tribute() {
    if (!byId("tribute-on")?.checked) return undefined;
    const value = (/** @type {string} */ name) => one(form, `[data-tribute="${name}"]`)?.value.trim() ?? "";
    const result = { type: one(form, "[data-tribute-type]:checked")?.value ?? "honor", name: value("name") };
    const message = value("message");
    if (message) result.message = message;
    if (byId("tribute-notify")?.checked) {
      if (value("recipient_name")) result.recipient_name = value("recipient_name");
      if (value("recipient_email")) result.recipient_email = value("recipient_email");
    }
    return result;
  }

  /** The answers to the campaign's questions by key; unanswered ones are left out. */
  function answers() {
    const result = {};
    for (const holder of all(form, "[data-answer]")) {
      const key = holder.getAttribute("data-answer");
      const type = holder.getAttribute("data-answer-type");
      if (type === "multiple_choice") {
        const chosen = Array.from(all(holder, "input:checked"), (box) => box.value);
        if (chosen.length > 0) result[key] = chosen;
      } else if (type === "single_choice") {
        const chosen = one(holder, "input:checked");
        if (chosen) result[key] = chosen.value;
      } else if (type === "checkbox") {
        if (holder.checked) result[key] = true;
      } else if (holder.value.trim() !== "") result[key] = holder.value.trim();
    }
    return result;
  }

  function submission() {
    const supporter = {};
    for (const control of all(form, "[data-supporter]")) {
      const value = control.value.trim();
      if (value !== "") supporter[control.getAttribute("data-supporter")] = value;
    }
    const consents = {};
    for (const box of all(form, "[data-consent]")) consents[box.getAttribute("data-consent")] = box.checked;
    const body = {
      client_secret: checkout.secret,
      amount: amount(),
      frequency: frequency(),
      processor: processor(),
      supporter,
      consents,
    };
    if (covered()) body.cover_fee = true;
    const dedication = tribute();
    if (dedication) body.tribute = dedication;
    const given = answers();
    if (Object.keys(given).length > 0) body.answers = given;
    if (processor() === "sandbox") {
      const year = byId("f-card-exp-year").value.trim();
      body.card = {
        number: byId("f-card-number").value.replace(/[\s-]/g, ""),
        exp_month: Number(byId("f-card-exp-month").value),
        exp_year: Number(year.length === 2 ? `20${year}` : year),
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
    if (value) button.textContent = say("processing");
    else refresh();
  }

  function showSuccess(result, body) {
    form.hidden = true;
    const donation = result.donation;
    const pending = result.result === "pending";
    // A SEPA Direct Debit: Stripe has the mandate, the bank debits in a few business days.
    const processing = pending && result.processing === true;
    const name = body.supporter.first_name;
    byId("success-title").textContent = pending
      ? name
        ? say("almost_done_name", { name })
        : say("almost_done")
      : name
        ? say("thanks_name", { name })
        : say("thanks");
    const outcome = processing ? "summary_processing" : pending ? "summary_pending" : "summary_received";
    byId("success-summary").textContent = say(outcome, {
      gift: say(`gift_${donation.frequency || 0}`),
      amount: money(donation.amount),
      organization: config.organization.name,
    });
    const bank = result.bank_transfer;
    if (pending && !processing && bank) {
      byId("transfer").hidden = false;
      byId("transfer-text").textContent = say("transfer_text", { payee: bank.account_name });
      byId("transfer-amount").textContent = money(result.payment.amount);
      byId("transfer-payee").textContent = bank.account_name;
      byId("transfer-iban").textContent = bank.iban.replace(/(.{4})(?=.)/g, "$1 ");
      byId("transfer-bic").textContent = bank.bic || "";
      byId("transfer-bic").parentElement.hidden = !bank.bic;
      byId("transfer-bic-label").hidden = !bank.bic;
      byId("transfer-reference").textContent = bank.reference;
    } else if (pending && !processing) {
      // No bank details entered yet: better no instructions than wrong ones.
      byId("transfer-contact").hidden = false;
      byId("transfer-contact-text").textContent = say("transfer_contact", {
        organization: config.organization.name,
        reference: donation.code,
        amount: money(result.payment.amount),
      });
    }
    if (donation.covered_fee > 0) {
      byId("success-summary").textContent += ` ${say("covered_fee", { amount: money(donation.covered_fee) })}`;
    }
    if (result.payment && result.payment.test === true) {
      byId("success-summary").textContent += ` ${say("test_gift")}`;
    }
    if (typeof result.receipt_url === "string" && /^https?:\/\//.test(result.receipt_url)) {
      /** @type {HTMLAnchorElement} */ (document.getElementById("receipt-link")).href = result.receipt_url;
      byId("receipt").hidden = false;
    }
    const success = byId("success");
    success.hidden = false;
    success.focus();
    if (!pending) refreshGoal();
    // The host page of embed.js hears that a gift was made: what and how often, nothing about who.
    tellHost({
      type: "donata:donation_completed",
      amount: donation.amount,
      currency: config.currency,
      frequency: donation.frequency || 0,
      campaign: config.campaign,
      organization: config.organization.slug,
      pending,
    });
  }

  /** The goal bar with this gift counted: the campaign as the public API now tells it. */
  async function refreshGoal() {
    const label = document.getElementById("goal-label");
    const bar = /** @type {HTMLProgressElement | null} */ (document.querySelector(".goal progress"));
    if (!label || !bar) return;
    try {
      const response = await fetch(`${api}/campaigns/${encodeURIComponent(config.campaign)}`, {
        headers: { accept: "application/json", "accept-language": config.locale },
        credentials: "omit",
      });
      if (!response.ok) return;
      const campaign = await response.json();
      const { raised, goal } = campaign;
      if (typeof raised !== "number" || typeof goal !== "number" || goal <= 0) return;
      const strong = label.querySelector("strong");
      const percent = label.querySelector(".muted");
      if (strong) strong.textContent = say("goal_progress", { raised: money(raised), goal: money(goal) });
      if (percent) percent.textContent = `(${Math.floor((raised / goal) * 100)}%)`;
      bar.max = goal;
      bar.value = Math.min(raised, goal);
    } catch (_) {}
  }

  async function submit(event) {
    event.preventDefault();
    if (busy) return;
    clearErrors();
    const invalid = validate();
    if (invalid) {
      showAlert(say("check_fields"));
      invalid.focus();
      return;
    }
    const stripeChosen = processor() === "stripe";
    if (stripeChosen && !elements) {
      loadStripe().catch(() => {});
      return showAlert(stripeFailed ? say("stripe_failed") : say("stripe_loading"));
    }
    setBusy(true);
    try {
      if (stripeChosen) {
        // First, while the click still counts as the donor's gesture (a wallet opens its sheet here).
        const checked = await elements.submit().catch(() => ({ error: { message: say("stripe_not_ready") } }));
        if (checked.error) return stripeProblem(checked.error.message);
      }
      const started = await startCheckout().catch((error) => {
        showProblem(error.problem, "start_failed");
        return undefined;
      });
      if (started === undefined) return;
      if (!started) return showAlert(say("choose_amount_alert"));
      const body = submission();
      const formText = JSON.stringify(body);
      // Pressing Donate again after a network failure or a 5xx sends the same Stripe token (and
      // challenge solution) under the same key: the server can never confirm two payments.
      const retry = stripeChosen && failedAttempt?.formText === formText ? failedAttempt : null;
      if (retry) Object.assign(body, retry.body);
      else if (stripeChosen) {
        const name = [body.supporter.first_name, body.supporter.last_name].filter(Boolean).join(" ");
        const billing = {};
        if (name) billing.name = name;
        if (body.supporter.email) billing.email = body.supporter.email;
        const minted = await stripe
          .createConfirmationToken({ elements, params: { payment_method_data: { billing_details: billing } } })
          .catch(() => ({ error: { message: say("service_unreachable") } }));
        if (minted.error) return stripeProblem(minted.error.message);
        body.confirmation_token = minted.confirmationToken.id;
      }
      if (challengeLoad && !retry) {
        byId("submit").textContent = say("checking_browser");
        const solved = await challengeSolution().catch(() => null);
        if (!solved) return showAlert(say("challenge_failed"));
        body.altcha = solved;
      }
      const text = JSON.stringify(body);
      const key = failedAttempt && failedAttempt.text === text ? failedAttempt.key : newKey();
      const url = `${api}/checkouts/${encodeURIComponent(checkout.id)}/complete`;
      let response;
      try {
        response = await post(url, body, { "Idempotency-Key": key });
        // 3-D Secure: the donor answers their bank in Stripe's frame, then the same request tells the outcome.
        for (let round = 0; response.status === 202 && response.body?.result === "requires_action"; round++) {
          if (round === 3) break;
          byId("submit").textContent = say("waiting_bank");
          await stripe.handleNextAction({ clientSecret: response.body.client_secret });
          byId("submit").textContent = say("processing");
          response = await post(url, body, { "Idempotency-Key": key });
        }
      } catch (_) {
        failedAttempt = { key, text, body, formText };
        return showAlert(say("server_unreachable"));
      }
      // After a 5xx the payment may have gone through (a processor timeout): the same submission keeps its key.
      failedAttempt = response.status >= 500 || response.status === 202 ? { key, text, body, formText } : null;
      if (body.altcha) renewChallenge();
      if (response.status === 200) return showSuccess(response.body, body);
      if (response.status === 202) {
        return stripeProblem(say("waiting_confirmation"));
      }
      const problem = response.body || {};
      if (response.status === 403 && /^challenge_/.test(problem.code || "")) {
        loadChallenge().catch(() => {});
        return showAlert(say("challenge_now"));
      }
      if (response.status === 402 && stripeChosen) {
        return stripeProblem(refusal(problem, "payment_not_completed"), say("try_another"));
      }
      if (response.status === 402) {
        fieldError("card.number", say("card_declined"));
        showAlert(refusal(problem, "payment_not_completed"));
        return;
      }
      if ((response.status === 404 || response.status === 409) && problem.code !== "payment_in_progress") {
        checkout = null;
        return showAlert(`${refusal(problem, "start_failed")} ${say("start_over")}`);
      }
      if (response.status === 410) {
        byId("submit").hidden = true;
        return showAlert(refusal(problem, "start_failed"));
      }
      if (response.status >= 500)
        return showAlert(refusal(problem.code ? problem : { code: "internal_error" }, "check_fields"));
      showProblem(problem, "check_fields");
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
          const { detail } = /** @type {CustomEvent} */ (event);
          challengePayload = detail?.payload;
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
  for (const radio of all(form, "input[name=frequency]")) radio.addEventListener("change", applyFrequency);
  for (const radio of all(form, "input[name=processor]")) radio.addEventListener("change", applyProcessor);
  for (const radio of all(form, "[data-asks] input")) {
    radio.addEventListener("change", () => {
      customInput.value = "";
      amountChosen();
    });
  }
  customInput.addEventListener("input", () => {
    if (customInput.value.trim() !== "") for (const ask of all(asksGroup(), "input")) ask.checked = false;
    refresh();
  });
  customInput.addEventListener("change", () => {
    const problem = amountProblem(amount());
    if (problem) fieldError("amount", problem);
    else amountChosen();
  });
  coverFeeBox?.addEventListener("change", refresh);
  byId("tribute-on")?.addEventListener("change", applyTribute);
  byId("tribute-notify")?.addEventListener("change", applyTribute);
  if (byId("tribute-on")) applyTribute();
  form.addEventListener("submit", submit);
  applyFrequency();
  if (config.stripe) loadStripe().catch(() => {});
  if (framed) {
    // In a frame the receipt opens in a tab of its own: its page may not be framed.
    document.getElementById("receipt-link")?.setAttribute("target", "_blank");
    // embed.js sizes an inline frame to the page, and closes its overlay on Escape pressed in here.
    const tellHeight = () =>
      tellHost({ type: "donata:resize", height: Math.ceil(document.documentElement.getBoundingClientRect().height) });
    new ResizeObserver(tellHeight).observe(document.documentElement);
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !event.defaultPrevented) tellHost({ type: "donata:close" });
    });
  }
})();
