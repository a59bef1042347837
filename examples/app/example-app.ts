import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AuthorizationError,
  type Checkout,
  DonataApiError,
  DonataClient,
  type Donation,
  InvalidStateError,
  ReauthorizationRequiredError,
  type TokenStore,
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
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (value: unknown) => String(value ?? "").replace(/[&<>"']/g, (char) => ESCAPES[char] as string);

const STYLE = `body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1f2933}table{border-collapse:collapse;width:100%;margin-bottom:2rem}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #e4e7eb}th{background:#f5f7fa}td.num{text-align:right}
.muted{color:#7b8794}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head><body>${body}</body></html>`;
}

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

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      console.error(error);
      if (!response.headersSent) send(response, 500, page("Error", "<h1>Something went wrong</h1>"));
      else response.end();
    });
  });

  function send(response: ServerResponse, status: number, html: string, headers: Record<string, string> = {}) {
    response.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      // Only the admin panel may frame this app; nothing but inline styles runs in it.
      "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors ${donataOrigin}`,
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
    const session = readCookie(request, SESSION_COOKIE);
    if (!session || !sessions.get(session)?.has(organization)) return startAuthorization(response, organization);

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
<tbody>${donationRows(donations.items)}</tbody></table>`,
      ),
    );
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
    if (request.method !== "GET" && request.method !== "HEAD") return send(response, 405, page("405", "<h1>405</h1>"));
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
