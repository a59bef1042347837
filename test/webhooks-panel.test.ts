import AxeBuilder from "@axe-core/playwright";
import { and, eq } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookDeliveries } from "../src/db/schema.js";
import { webhookSenderDeps } from "../src/jobs/webhook.job.js";
import { createUser } from "../src/modules/users/users.service.js";
import { deliverWebhooks } from "../src/modules/webhooks/webhook-delivery.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { startWebhookReceiver } from "./helpers/webhook-receiver.js";

const PASSWORD = "a long enough password";

/** Settings → Webhooks in chromium against the real server: endpoints, the delivery log, send again, pause. */
describe("admin panel: webhooks", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let adminEmail: string;
  let memberEmail: string;
  let endpoint: { id: number; url: string };

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return response.json();
  };
  const deliver = () =>
    deliverWebhooks(server.database.db, webhookSenderDeps(server.config), { organizationIds: [tenant.organizationId] });

  beforeAll(async () => {
    [server, browser, receiver] = await Promise.all([
      startTestServer({ webhookAllowPrivateNetworks: true }),
      launchChromium(),
      startWebhookReceiver(),
    ]);
    tenant = await fakeTenant(server.database.db);
    adminEmail = `admin-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(server.database.db, {
      email: adminEmail,
      password: PASSWORD,
      organization: tenant.slug,
      role: "admin",
    });
    await createUser(server.database.db, {
      email: memberEmail,
      password: PASSWORD,
      organization: tenant.slug,
      role: "member",
    });
    endpoint = await api("POST", "/api/v1/webhook_endpoints/", {
      url: receiver.url("/crm/hooks"),
      event_types: ["supporter.created"],
      description: "CRM sync",
    });
    // One delivery answered 200, the next refused with a 500 (its answer kept in the log).
    await api("POST", "/api/v1/supporters/", { first_name: "Ada" });
    await deliver();
    receiver.answer((_request, response) => {
      response.statusCode = 500;
      response.end('{"error":"database locked"}');
    });
    await api("POST", "/api/v1/supporters/", { first_name: "Grace" });
    await deliver();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.close();
  });

  it("lists the endpoints and each delivery with its attempts; sends one again; pauses and resumes", async () => {
    const page = await signInToPanel(browser, {
      url: server.url,
      email: adminEmail,
      password: PASSWORD,
      organization: tenant.slug,
    });
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(/\/webhooks$/);
    const endpoints = page.locator('[data-testid="table-webhooks"] tbody tr');
    await endpoints.first().waitFor();
    const row = (await endpoints.first().textContent()) ?? "";
    expect(row).toContain(endpoint.url);
    expect(row).toContain("supporter.created");
    expect(row).toContain("enabled");
    let axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);

    await page.getByRole("link", { name: endpoint.url }).click();
    await page.waitForURL(new RegExp(`/webhooks/${endpoint.id}$`));
    const deliveries = page.locator('[data-testid="table-deliveries"] tbody tr');
    await deliveries.first().waitFor();
    expect(await deliveries.count()).toBe(2);
    expect(await deliveries.nth(0).textContent()).toContain("HTTP 500");
    expect(await deliveries.nth(1).textContent()).toContain("HTTP 200");
    await deliveries.nth(0).locator("summary").click();
    await expect(deliveries.nth(0).locator(".attempt-log").textContent()).resolves.toContain(
      '{"error":"database locked"}',
    );
    axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);

    // Send the refused one again, now that the receiver works.
    receiver.answer((_request, response) => response.end("ok"));
    const refusedId = Number(
      (await deliveries.nth(0).locator("[data-testid^=attempts-]").getAttribute("data-testid"))?.split("-")[1],
    );
    await page.locator(`[data-testid="retry-${refusedId}"]`).click();
    await page.locator('[data-testid="confirm-dialog-confirm"]').click();
    await page.getByRole("status").filter({ hasText: "Sent again" }).waitFor();
    const before = receiver.received.length;
    await deliver();
    expect(receiver.received.length).toBe(before + 1);
    const [retried] = await server.database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.organizationId, tenant.organizationId), eq(webhookDeliveries.id, refusedId)));
    expect(retried).toMatchObject({ state: "succeeded", lastStatus: 200 });

    // Paused: events wait; resumed: they go.
    await page.locator(`[data-testid="pause-${endpoint.id}"]`).click();
    await page.locator('[data-testid="confirm-dialog-confirm"]').click();
    await page.locator(`[data-testid="resume-${endpoint.id}"]`).waitFor();
    await api("POST", "/api/v1/supporters/", { first_name: "Held" });
    await deliver();
    expect(receiver.received.length).toBe(before + 1);
    await page.locator(`[data-testid="resume-${endpoint.id}"]`).click();
    await page.locator('[data-testid="confirm-dialog-confirm"]').click();
    await page.locator(`[data-testid="pause-${endpoint.id}"]`).waitFor();
    await deliver();
    expect(receiver.received.length).toBe(before + 2);
    expect(JSON.parse(receiver.received.at(-1)?.body ?? "{}").data.first_name).toBe("Held");
    await page.context().close();
  });

  it("shows a member the log without the buttons that change it", async () => {
    const page = await signInToPanel(browser, {
      url: server.url,
      email: memberEmail,
      password: PASSWORD,
      organization: tenant.slug,
    });
    await page.goto(`${server.url}/admin/o/${tenant.slug}/webhooks/${endpoint.id}`);
    await page.locator('[data-testid="table-deliveries"]').waitFor();
    expect(await page.locator("[data-testid^=retry-], [data-testid^=pause-], [data-testid=resend]").count()).toBe(0);
    await page.context().close();
  });
});
