import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/** GraphiQL and a hostile page on another port of the same host, in Debian's chromium. */
describe("GraphiQL and cross-origin pages in a browser", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let sessionToken: string;
  let hostile: Server;
  let hostileOrigin: string;

  const signedIn = async (): Promise<BrowserContext> => {
    const context = await browser.newContext();
    // The admin's cookie for 127.0.0.1: the browser also sends it to every other port of that host.
    await context.addCookies([{ name: SESSION_COOKIE, value: sessionToken, url: server.url }]);
    return context;
  };

  const members = async () =>
    (await server.database.db.select().from(memberships).where(eq(memberships.organizationId, tenant.organizationId)))
      .length;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    const owner = await createUser(server.database.db, {
      email: `owner-${unique(6)}@example.test`,
      password: "a long enough password",
      organization: tenant.slug,
      role: "owner",
    });
    sessionToken = await createSession(server.database.db, server.config, owner.id);
    hostile = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<!doctype html><title>Cat pictures</title><h1>Nothing to see</h1>");
    });
    await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
    hostileOrigin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    hostile?.close();
    await server?.close();
  });

  it("loads GraphiQL under its Content-Security-Policy and lists the schema in the Docs pane", async () => {
    const context = await signedIn();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    const response = await page.goto(`${server.url}/admin/graphql/`);
    await page.click('button[aria-label="Show Documentation Explorer"]');
    const docs = page.locator(".graphiql-doc-explorer");
    await docs.getByText("query: Query").waitFor();
    await docs.getByText("Query", { exact: true }).click();
    await docs.getByText("Everything an organization can read").waitFor();
    const text = await docs.innerText();
    for (const field of ["checkouts(", "campaigns(", "members: [Member!]!", "dashboard("])
      expect(text).toContain(field);
    expect(await page.getByText("Error fetching schema").count()).toBe(0);
    expect(problems).toEqual([]);
    expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(response?.headers()["x-frame-options"]).toBe("DENY");
    await context.close();
  });

  it("lets a page on another port of the same host neither read members nor add an owner", async () => {
    const before = await members();
    const context = await signedIn();
    const page = await context.newPage();
    await page.goto(hostileOrigin);
    const outcome = await page.evaluate(
      async ({ endpoint, email }) => {
        const attempt = async (init: RequestInit) => {
          try {
            const response = await fetch(endpoint, { credentials: "include", ...init });
            return `read ${response.status}: ${await response.text()}`;
          } catch (error) {
            return `blocked: ${(error as Error).name}`;
          }
        };
        const json = { "content-type": "application/json" };
        const addOwner = JSON.stringify({
          query: `mutation { addMember(email: "${email}", role: "owner") { member { user_id } } }`,
        });
        return {
          read: await attempt({
            method: "POST",
            headers: json,
            body: JSON.stringify({ query: "{ members { email } }" }),
          }),
          readByGet: await attempt({ method: "GET" }),
          add: await attempt({ method: "POST", headers: json, body: addOwner }),
          // An opaque request the browser sends without a preflight: the server's origin check refuses it.
          blind: await attempt({
            method: "POST",
            mode: "no-cors",
            headers: { "content-type": "text/plain" },
            body: addOwner,
          }),
        };
      },
      { endpoint: `${server.url}/admin/graphql/`, email: `intruder-${unique(6)}@example.test` },
    );
    expect(outcome).toEqual({
      read: "blocked: TypeError",
      readByGet: "blocked: TypeError",
      add: "blocked: TypeError",
      blind: "read 0: ",
    });
    expect(await members()).toBe(before);
    await context.close();
  });
});
