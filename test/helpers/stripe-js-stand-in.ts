import type { BrowserContext, Route } from "playwright-core";
import type { StripeStandIn } from "./stripe-stand-in.js";

/**
 * A stand-in for Stripe.js (https://js.stripe.com/v3/), served to the browser by route interception
 * because no machine running the tests reaches Stripe. It exposes the calls the donation page
 * makes, with Stripe.js's shapes:
 *
 * - `Stripe(publishableKey)` → `{ elements, createConfirmationToken, handleNextAction }`;
 * - `elements(options)` → `{ create("payment"), update(options), submit() }`; the element's
 *   `mount(selector)` renders a small form in the page: a select of test methods (a card that
 *   succeeds, one that is declined, one asking for 3-D Secure, a SEPA Direct Debit with its
 *   mandate text);
 * - `createConfirmationToken({ elements, params })` mints a ConfirmationToken for the chosen
 *   method with POST https://api.stripe.com/v1/confirmation_tokens (the test forwards it to the
 *   local Stripe API stand-in, which also proves the page's connect-src);
 * - `confirmSetup({ elements, redirect: "if_required" })` (Elements made with a SetupIntent's
 *   `clientSecret`) confirms it with the chosen method at POST
 *   https://api.stripe.com/v1/setup_intents/{id}/confirm, as the portal's payment-method page does;
 * - `handleNextAction({ clientSecret })` opens Stripe's challenge frame on https://hooks.stripe.com
 *   (which proves frame-src); the test answers in it like the donor answering their bank.
 *
 * Every call is recorded in `window.__stripeCalls` (read with `stripeJsCalls(page)`).
 */
export const STRIPE_JS_STAND_IN = `(() => {
  "use strict";
  const calls = [];
  Object.defineProperty(window, "__stripeCalls", { value: calls });
  const copy = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const METHODS = {
    card_ok: { label: "Card ok (4242)", params: { payment_method: "pm_card_visa" } },
    card_declined: { label: "Card declined (0002)", params: { payment_method: "pm_card_chargeDeclined" } },
    three_d_secure: { label: "3-D Secure (3184)", params: { payment_method: "pm_card_authenticationRequired" } },
    sepa: {
      label: "SEPA Direct Debit (DE89…3000)",
      params: { payment_method_data: { type: "sepa_debit", sepa_debit: { iban: "DE89370400440532013000" } } },
    },
  };
  /** Stripe's form encoding: { a: { b: 1 } } → a[b]=1. */
  function encode(value, prefix, out) {
    if (value !== null && typeof value === "object") {
      for (const [name, inner] of Object.entries(value)) encode(inner, prefix ? prefix + "[" + name + "]" : name, out);
    } else if (value !== undefined && value !== null) out.append(prefix, String(value));
    return out;
  }
  function merge(target, source) {
    for (const [name, value] of Object.entries(source || {})) {
      if (value && typeof value === "object" && target[name] && typeof target[name] === "object") merge(target[name], value);
      else target[name] = value;
    }
    return target;
  }

  window.Stripe = function Stripe(publishableKey) {
    calls.push({ call: "Stripe", publishableKey });
    if (!/^pk_(test|live)_/.test(publishableKey)) throw new Error("Invalid publishable key");

    function elements(options) {
      calls.push({ call: "elements", options: copy(options) });
      // What Elements was told last: a token made now carries its setup_future_usage, as Stripe's do.
      const current = Object.assign({}, options);
      let select = null;
      return {
        create(type, createOptions) {
          calls.push({ call: "create", type, options: copy(createOptions) });
          return {
            on() {},
            mount(target) {
              calls.push({ call: "mount", target: String(target) });
              const root = typeof target === "string" ? document.querySelector(target) : target;
              const label = document.createElement("label");
              label.htmlFor = "stripe-stand-in-method";
              label.textContent = "Test payment method";
              select = document.createElement("select");
              select.id = "stripe-stand-in-method";
              for (const [value, method] of Object.entries(METHODS)) select.add(new Option(method.label, value));
              const mandate = document.createElement("p");
              mandate.id = "stripe-stand-in-mandate";
              mandate.textContent =
                "By providing your payment information and confirming this payment, you authorise the organization and Stripe to send instructions to your bank to debit your account.";
              const showMandate = () => { mandate.hidden = select.value !== "sepa"; };
              select.addEventListener("change", showMandate);
              showMandate();
              root.append(label, select, mandate);
            },
          };
        },
        update(changes) {
          calls.push({ call: "update", options: copy(changes) });
          Object.assign(current, changes);
        },
        async submit() {
          calls.push({ call: "submit" });
          if (!select) return { error: { type: "validation_error", message: "The payment form is not ready." } };
          return {};
        },
        get __method() {
          return select && select.value;
        },
        get __setupFutureUsage() {
          return current.setupFutureUsage || null;
        },
        get __clientSecret() {
          return current.clientSecret || null;
        },
      };
    }

    async function createConfirmationToken({ elements: chosen, params }) {
      const method = METHODS[chosen.__method];
      calls.push({ call: "createConfirmationToken", method: chosen.__method, params: copy(params) });
      const body = merge(merge({ key: publishableKey }, copy(method.params)), copy(params || {}));
      if (body.payment_method) delete body.payment_method_data;
      if (chosen.__setupFutureUsage) body.setup_future_usage = chosen.__setupFutureUsage;
      const response = await fetch("https://api.stripe.com/v1/confirmation_tokens", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: encode(body, "", new URLSearchParams()).toString(),
      });
      const json = await response.json();
      if (!response.ok) return { error: json.error };
      return { confirmationToken: json };
    }

    async function confirmSetup({ elements: chosen, redirect }) {
      const method = METHODS[chosen.__method];
      const clientSecret = chosen.__clientSecret;
      calls.push({ call: "confirmSetup", method: chosen.__method, redirect });
      if (!clientSecret) return { error: { type: "invalid_request_error", message: "Elements has no clientSecret." } };
      const id = clientSecret.replace(/_secret_.*$/, "");
      const body = merge({ key: publishableKey, client_secret: clientSecret }, copy(method.params));
      const response = await fetch("https://api.stripe.com/v1/setup_intents/" + id + "/confirm", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: encode(body, "", new URLSearchParams()).toString(),
      });
      const json = await response.json();
      if (!response.ok) return { error: json.error };
      return { setupIntent: json };
    }

    function handleNextAction({ clientSecret }) {
      calls.push({ call: "handleNextAction", clientSecret });
      return new Promise((resolve) => {
        const frame = document.createElement("iframe");
        frame.title = "3-D Secure authentication";
        frame.src = "https://hooks.stripe.com/3d_secure_2/stand-in?client_secret=" + encodeURIComponent(clientSecret);
        function answered(event) {
          if (event.origin !== "https://hooks.stripe.com" || event.source !== frame.contentWindow) return;
          window.removeEventListener("message", answered);
          frame.remove();
          const intent = { id: event.data.id, status: event.data.status };
          if (intent.status === "succeeded") return resolve({ paymentIntent: intent });
          resolve({
            paymentIntent: intent,
            error: {
              type: "invalid_request_error",
              code: "payment_intent_authentication_failure",
              message: "We are unable to authenticate your payment method. Please choose a different payment method and try again.",
            },
          });
        }
        window.addEventListener("message", answered);
        document.body.append(frame);
      });
    }

    return { elements, createConfirmationToken, confirmSetup, handleNextAction };
  };
})();
`;

/** The 3-D Secure challenge as the donor's bank shows it in Stripe's frame. */
function challengePage(clientSecret: string): string {
  const answer = (outcome: string) =>
    `/3d_secure_2/stand-in/answer?outcome=${outcome}&client_secret=${encodeURIComponent(clientSecret)}`;
  return `<!doctype html><html lang="en"><title>3-D Secure</title><body>
<h1>Your bank asks you to confirm this payment</h1>
<p><a href="${answer("succeeded")}" role="button">Complete authentication</a></p>
<p><a href="${answer("failed")}" role="button">Fail authentication</a></p>
</body></html>`;
}

/** Tells Stripe.js in the donation page how the challenge ended. */
function answeredPage(id: string, status: string): string {
  const message = JSON.stringify({ id, status });
  return `<!doctype html><html lang="en"><title>3-D Secure</title><body><p>Done.</p>
<script>parent.postMessage(${message}, "*");</script></body></html>`;
}

export interface StripeJsCall {
  call: string;
  [field: string]: unknown;
}

/**
 * Serves the stand-in for Stripe.js to every page of the context and plays Stripe's servers:
 * api.stripe.com requests go to the local stand-in (the publishable key Stripe.js sends in the
 * body becomes the Bearer key the stand-in reads), hooks.stripe.com serves the 3-D Secure
 * challenge and settles the intent in the stand-in with the donor's answer. Requests to any other
 * Stripe host fail the test.
 */
export async function serveStripeJs(
  context: BrowserContext,
  options: { standIn: StripeStandIn; publishableKey: string },
): Promise<{ unexpected: string[] }> {
  const unexpected: string[] = [];
  const cors = { "access-control-allow-origin": "*" };
  await context.route("https://js.stripe.com/**", (route: Route) => {
    const url = route.request().url();
    if (url !== "https://js.stripe.com/v3/") {
      unexpected.push(url);
      return route.fulfill({ status: 404, body: "" });
    }
    return route.fulfill({
      status: 200,
      headers: { "content-type": "text/javascript; charset=utf-8", ...cors },
      body: STRIPE_JS_STAND_IN,
    });
  });
  await context.route("https://api.stripe.com/**", async (route: Route) => {
    const request = route.request();
    const url = new URL(request.url());
    const body = new URLSearchParams(request.postData() ?? "");
    if (body.get("key") !== options.publishableKey) {
      const error = { error: { type: "invalid_request_error", message: "Invalid API Key provided" } };
      return route.fulfill({
        status: 401,
        headers: cors,
        contentType: "application/json",
        body: JSON.stringify(error),
      });
    }
    body.delete("key");
    const { host, port } = options.standIn.api;
    const response = await fetch(`http://${host}:${port}${url.pathname}${url.search}`, {
      method: request.method(),
      headers: {
        authorization: `Bearer ${options.publishableKey}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: request.method() === "GET" ? undefined : body.toString(),
    });
    return route.fulfill({
      status: response.status,
      headers: { ...cors, "content-type": "application/json" },
      body: await response.text(),
    });
  });
  await context.route("https://hooks.stripe.com/**", (route: Route) => {
    const url = new URL(route.request().url());
    const clientSecret = url.searchParams.get("client_secret") ?? "";
    const html = { status: 200, contentType: "text/html; charset=utf-8" };
    if (url.pathname === "/3d_secure_2/stand-in") return route.fulfill({ ...html, body: challengePage(clientSecret) });
    if (url.pathname === "/3d_secure_2/stand-in/answer") {
      const intentId = clientSecret.replace(/_secret_.*$/, "");
      const outcome = url.searchParams.get("outcome") === "succeeded" ? "succeeded" : "failed";
      options.standIn.settle(intentId, outcome);
      const status = options.standIn.paymentIntents.get(intentId)?.status ?? "unknown";
      return route.fulfill({ ...html, body: answeredPage(intentId, status) });
    }
    unexpected.push(url.href);
    return route.fulfill({ status: 404, body: "" });
  });
  return { unexpected };
}

/** The Stripe.js calls the page made, in order. */
export function stripeJsCalls(page: { evaluate<T>(fn: () => T): Promise<T> }): Promise<StripeJsCall[]> {
  return page.evaluate(() => (window as unknown as { __stripeCalls: StripeJsCall[] }).__stripeCalls);
}
