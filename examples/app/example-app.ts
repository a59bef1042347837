import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AuthorizationError,
  type Checkout,
  DonataApiError,
  DonataClient,
  type Donation,
  type Event,
  InvalidStateError,
  ReauthorizationRequiredError,
  type TokenStore,
  WebhookVerificationError,
  webhooks,
} from "../../packages/sdk/src/index.js";

export interface ExampleAppOptions {
  /** 0 picks a free port. */
  port: number;
  /** The platform's origin: REST, GraphQL and the admin panel that frames this app. */
  donataUrl: string;
  /** The authorization server's origin, when not donataUrl. */
  authUrl?: string;
  clientId: string;
  clientSecret: string;
  /** This app's public origin (its registered URL); defaults to http://localhost:<port>. */
  publicUrl?: string;
  host?: string;
  tokenStore?: TokenStore;
  fetch?: typeof fetch;
  /** Rows shown per table. */
  pageSize?: number;
}

export interface ExampleApp {
  url: string;
  client: DonataClient;
  close(): Promise<void>;
}

const SESSION_COOKIE = "example_session";
/** Where Donata POSTs this app's webhooks (the organization in the query picks the secret). */
const WEBHOOK_PATH = "/webhooks/donata";
/** Payments kept per organization for the live list. */
const RECEIVED_KEPT = 20;

interface ReceivedPayment {
  event_id: string;
  payment_id: number | null;
  amount: number | null;
  currency: string | null;
  received_date: string;
}
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (value: unknown) => String(value ?? "").replace(/[&<>"']/g, (char) => ESCAPES[char] as string);

const STYLE = `body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1f2933}table{border-collapse:collapse;width:100%;margin-bottom:2rem}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #e4e7eb}th{background:#f5f7fa}td.num{text-align:right}
.muted{color:#7b8794}`;

function page(title: string, body: string, script = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head><body>${body}${script}</body></html>`;
}

function paymentItems(payments: readonly ReceivedPayment[]): string {
  return payments
    .map(
      (payment) =>
        `<li data-event-id="${escapeHtml(payment.event_id)}">Payment #${escapeHtml(payment.payment_id)}: ${money(payment.amount, payment.currency ?? undefined)} <span class="muted">(${date(payment.received_date)})</span></li>`,
    )
    .join("");
}

/** Polls the app's own JSON every 2 s and redraws the list: the payments arrive as Donata delivers them. */
const LIVE_SCRIPT = `const list = document.getElementById("payments");
const organization = new URLSearchParams(location.search).get("__organization");
async function poll() {
  try {
    const response = await fetch("/webhooks/received?__organization=" + encodeURIComponent(organization));
    if (response.ok) {
      const payments = await response.json();
      list.replaceChildren(...payments.map((payment) => {
        const item = document.createElement("li");
        item.dataset.eventId = payment.event_id;
        item.textContent = "Payment #" + payment.payment_id + ": " + (payment.amount ?? 0).toFixed(2) + " " + (payment.currency ?? "");
        return item;
      }));
    }
  } finally {
    setTimeout(poll, 2000);
  }
}
setTimeout(poll, 2000);`;

const money = (amount: number | null, currency?: string) =>
  amount === null ? "—" : `${amount.toFixed(2)}${currency ? ` ${escapeHtml(currency)}` : ""}`;
const date = (value: string | null) => (value ? escapeHtml(value.slice(0, 16).replace("T", " ")) : "—");
const FREQUENCIES: Record<number, string> = { 0: "one-off", 1: "yearly", 12: "monthly" };

function checkoutRows(checkouts: Checkout[]): string {
  return checkouts
    .map((checkout) => {
      const supporter = checkout.supporter as { first_name?: string | null; last_name?: string | null } | null;
      const campaign = checkout.campaign as { title?: string } | null;
      const name = [supporter?.first_name, supporter?.last_name].filter(Boolean).join(" ");
      return `<tr data-checkout-id="${checkout.id}"><td>${checkout.id}</td><td>${date(checkout.create_date)}</td>
<td>${escapeHtml(checkout.state)}</td><td class="num">${money(checkout.amount)}</td><td>${escapeHtml(name) || "—"}</td>
<td>${escapeHtml(campaign?.title) || "—"}</td></tr>`;
    })
    .join("\n");
}

function donationRows(donations: Donation[]): string {
  return donations
    .map(
      (donation) => `<tr data-donation-id="${donation.id}"><td>${donation.id}</td><td>${escapeHtml(donation.code)}</td>
<td>${date(donation.create_date)}</td><td>${escapeHtml(donation.state)}</td>
<td class="num">${money(donation.amount, donation.currency)}</td>
<td>${escapeHtml(donation.frequency === null ? "—" : (FREQUENCIES[donation.frequency] ?? donation.frequency))}</td></tr>`,
    )
    .join("\n");
}

function readCookie(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

/**
 * A small application an organization installs: opened in the admin panel's iframe at
 * `/?__organization=<slug>`, it authorizes itself for that organization through the SDK and lists the
 * organization's latest checkouts and donations. The SDK refreshes tokens as they expire.
 */
export async function startExampleApp(options: ExampleAppOptions): Promise<ExampleApp> {
  const donataOrigin = new URL(options.donataUrl).origin;
  const pageSize = options.pageSize ?? 20;
  // Which organizations each browser completed the flow for: tokens act for an organization, so
  // a visitor sees its data only after Donata vouched for them (sign-in and, once, consent).
  const sessions = new Map<string, Set<string>>();
  let client: DonataClient | undefined;
  // Per organization: the endpoint's signing secret (shown once by Donata), why there is none, and what came.
  const webhookSecrets = new Map<string, string>();
  const webhookProblems = new Map<string, string>();
  const received = new Map<string, ReceivedPayment[]>();

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      console.error(error);
      if (!response.headersSent) send(response, 500, page("Error", "<h1>Something went wrong</h1>"));
      else response.end();
    });
  });

  function send(
    response: ServerResponse,
    status: number,
    html: string,
    headers: Record<string, string> = {},
    nonce?: string,
  ) {
    response.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      // Only the admin panel may frame this app; inline styles and the one script with this page's nonce run in it.
      "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; ${nonce ? `script-src 'nonce-${nonce}'; connect-src 'self'; ` : ""}frame-ancestors ${donataOrigin}`,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      ...headers,
    });
    response.end(html);
  }

  function redirect(response: ServerResponse, location: string, headers: Record<string, string> = {}) {
    send(response, 302, "", { location, ...headers });
  }

  async function startAuthorization(response: ServerResponse, organization: string) {
    const { url } = await (client as DonataClient).authorizationUrl({ organization });
    redirect(response, url);
  }

  /**
   * Subscribes the organization's payments to this app once per process: the endpoint is created the
   * first time; after a restart the app, which kept no secret, rotates it to learn a new one.
   */
  async function ensureWebhook(organization: string) {
    if (webhookSecrets.has(organization)) return;
    const api = (client as DonataClient).forOrganization(organization);
    const target = `${publicUrl}${WEBHOOK_PATH}?__organization=${encodeURIComponent(organization)}`;
    try {
      const existing = (await api.webhookEndpoints.list()).find((endpoint) => endpoint.url === target);
      const endpoint = existing
        ? await api.webhookEndpoints.rotateSecret(existing.id)
        : await api.webhookEndpoints.create({
            url: target,
            event_types: ["payment.paid"],
            description: "Example app: payments received, shown live",
          });
      webhookSecrets.set(organization, endpoint.secret);
      webhookProblems.delete(organization);
    } catch (error) {
      if (!(error instanceof DonataApiError)) throw error;
      webhookProblems.set(
        organization,
        error.code === "webhook_url_refused"
          ? `Donata refused to send webhooks to ${target}: it is a local address. Start the platform with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to deliver to this app.`
          : `Webhooks are not set up: ${error.detail}`,
      );
    }
  }

  /** A webhook from Donata: verified against the organization's secret, then kept for the live list. */
  async function receiveWebhook(request: IncomingMessage, response: ServerResponse, url: URL) {
    const organization = url.searchParams.get("__organization") ?? "";
    const secret = webhookSecrets.get(organization);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > 1_000_000) return send(response, 413, "", { "content-type": "text/plain" });
      chunks.push(chunk as Buffer);
    }
    if (!secret) return send(response, 404, "", { "content-type": "text/plain" });
    let event: Event;
    try {
      event = await webhooks.verify(Buffer.concat(chunks).toString("utf8"), request.headers, secret);
    } catch (error) {
      if (error instanceof WebhookVerificationError) return send(response, 400, "", { "content-type": "text/plain" });
      throw error;
    }
    const list = received.get(organization) ?? [];
    // At least once: a repeat (same webhook-id) is acknowledged and not shown twice.
    if (event.type === "payment.paid" && !list.some((payment) => payment.event_id === event.id)) {
      const data = event.data as { id?: number; amount?: number; currency?: string };
      list.unshift({
        event_id: event.id,
        payment_id: data.id ?? null,
        amount: data.amount ?? null,
        currency: data.currency ?? null,
        received_date: new Date().toISOString(),
      });
      received.set(organization, list.slice(0, RECEIVED_KEPT));
    }
    response.writeHead(204).end();
  }

  function authorizedFor(request: IncomingMessage, organization: string) {
    const session = readCookie(request, SESSION_COOKIE);
    return Boolean(session && sessions.get(session)?.has(organization));
  }

  async function home(request: IncomingMessage, response: ServerResponse, url: URL) {
    const organization = url.searchParams.get("__organization");
    if (!organization) {
      return send(
        response,
        400,
        page(
          "Open from Donata",
          `<h1>Open this app from the Donata admin panel</h1><p>It expects <code>?__organization=&lt;slug&gt;</code>: <a href="${escapeHtml(donataOrigin)}/admin/">${escapeHtml(donataOrigin)}/admin/</a>.</p>`,
        ),
      );
    }
    if (!authorizedFor(request, organization)) return startAuthorization(response, organization);

    const api = (client as DonataClient).forOrganization(organization);
    let checkouts: { items: Checkout[]; count: number };
    let donations: { items: Donation[]; count: number };
    try {
      [checkouts, donations] = await Promise.all([
        api.checkouts.list({ limit: pageSize, order: "-create_date" }),
        api.donations.list({ limit: pageSize, order: "-create_date" }),
      ]);
    } catch (error) {
      // Uninstalled, revoked or never authorized in this process: ask Donata again.
      if (error instanceof ReauthorizationRequiredError) return startAuthorization(response, organization);
      if (error instanceof DonataApiError && error.status === 403) {
        return send(
          response,
          403,
          page("Missing permission", `<h1>Missing permission</h1><p>${escapeHtml(error.detail)}</p>`),
        );
      }
      throw error;
    }
    await ensureWebhook(organization);
    const problem = webhookProblems.get(organization);
    const nonce = randomBytes(16).toString("base64");
    send(
      response,
      200,
      page(
        `Latest activity · ${organization}`,
        `<h1>Latest activity of <span data-organization>${escapeHtml(organization)}</span></h1>
<h2>Checkouts <span class="muted">(${checkouts.count} in total)</span></h2>
<table data-testid="checkouts"><thead><tr><th>#</th><th>Created (UTC)</th><th>State</th><th>Amount</th><th>Supporter</th><th>Campaign</th></tr></thead>
<tbody>${checkoutRows(checkouts.items)}</tbody></table>
<h2>Donations <span class="muted">(${donations.count} in total)</span></h2>
<table data-testid="donations"><thead><tr><th>#</th><th>Code</th><th>Created (UTC)</th><th>State</th><th>Amount</th><th>Frequency</th></tr></thead>
<tbody>${donationRows(donations.items)}</tbody></table>
<h2>Payments received, live <span class="muted">(webhook <code>payment.paid</code>)</span></h2>
${problem ? `<p data-testid="webhook-problem">${escapeHtml(problem)}</p>` : ""}
<ul id="payments" data-testid="payments">${paymentItems(received.get(organization) ?? [])}</ul>`,
        `<script nonce="${nonce}">${LIVE_SCRIPT}</script>`,
      ),
      {},
      nonce,
    );
  }

  function receivedJson(request: IncomingMessage, response: ServerResponse, url: URL) {
    const organization = url.searchParams.get("__organization") ?? "";
    if (!authorizedFor(request, organization)) return send(response, 403, "[]", { "content-type": "application/json" });
    send(response, 200, JSON.stringify(received.get(organization) ?? []), { "content-type": "application/json" });
  }

  async function callback(request: IncomingMessage, response: ServerResponse, url: URL) {
    let organization: string;
    try {
      ({ organization } = await (client as DonataClient).handleCallback(url.searchParams));
    } catch (error) {
      if (error instanceof InvalidStateError) {
        return send(
          response,
          400,
          page("Invalid request", `<h1>Invalid authorization response</h1><p>${escapeHtml(error.message)}.</p>`),
        );
      }
      if (error instanceof AuthorizationError) {
        const retry = error.organization ? `?__organization=${encodeURIComponent(error.organization)}` : "";
        return send(
          response,
          error.error === "access_denied" ? 403 : 400,
          page(
            "Not authorized",
            `<h1>Not authorized</h1><p>${escapeHtml(error.message)}</p><p><a href="/${escapeHtml(retry)}">Try again</a></p>`,
          ),
        );
      }
      throw error;
    }
    let session = readCookie(request, SESSION_COOKIE);
    if (!session || !sessions.has(session)) {
      session = randomBytes(32).toString("base64url");
      sessions.set(session, new Set());
    }
    sessions.get(session)?.add(organization);
    redirect(response, `/?__organization=${encodeURIComponent(organization)}`, {
      "set-cookie": `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax${url.protocol === "https:" ? "; Secure" : ""}`,
    });
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? "/", publicUrl);
    if (url.pathname === WEBHOOK_PATH && request.method === "POST") return receiveWebhook(request, response, url);
    if (request.method !== "GET" && request.method !== "HEAD") return send(response, 405, page("405", "<h1>405</h1>"));
    if (url.pathname === "/webhooks/received") return receivedJson(request, response, url);
    if (url.pathname === "/") return home(request, response, url);
    if (url.pathname === "/callback") return callback(request, response, url);
    if (url.pathname === "/healthz") return send(response, 200, "ok", { "content-type": "text/plain" });
    return send(response, 404, page("Not found", "<h1>Not found</h1>"));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  const publicUrl = (options.publicUrl ?? `http://localhost:${port}`).replace(/\/+$/, "");
  client = new DonataClient({
    baseUrl: options.donataUrl,
    authUrl: options.authUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUri: `${publicUrl}/callback`,
    tokenStore: options.tokenStore,
    fetch: options.fetch,
  });
  return {
    url: publicUrl,
    client,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
