import AxeBuilder from "@axe-core/playwright";
import { and, eq, sql } from "drizzle-orm";
import * as mupdf from "mupdf";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaigns, outboxMessages, users } from "../src/db/schema.js";
import type { CampaignQuestionWire } from "../src/modules/campaigns/campaign-questions.js";
import { createUser } from "../src/modules/users/users.service.js";
import { SANDBOX_CARDS } from "../src/payments/processors/sandbox.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;

const PASSWORD = "a long enough password";

const QUESTIONS: CampaignQuestionWire[] = [
  { key: "shirt_size", type: "single_choice", label: "T-shirt size", required: true, options: ["S", "M", "L"] },
  {
    key: "heard_from",
    type: "multiple_choice",
    label: "How did you hear about us?",
    required: false,
    options: ["Radio", "A friend", "Social media"],
  },
  { key: "company", type: "short_text", label: "Company", required: false },
  { key: "why", type: "long_text", label: "Why do you give?", required: false },
  { key: "newsletter_ok", type: "checkbox", label: "I agree to be named among our supporters", required: true },
];

const ANSWERS = {
  shirt_size: "M",
  heard_from: ["A friend", "Radio"],
  company: "Acme",
  newsletter_ok: true,
};

const TRIBUTE = {
  type: "memory",
  name: "Maria Rossi",
  message: "Maria loved this school.\nWith love, Anna",
  recipient_name: "Luca Rossi",
  recipient_email: `luca-${unique(6)}@example.test`,
};

/**
 * Tribute gifts and the campaign's own questions (docs/campaigns.md): the public campaign tells the
 * form, a completion is checked against the campaign before any charge, and what is kept shows in
 * REST, GraphQL, CSV, the events feed, the receipt, the tribute notice and the panel.
 */
describe("tribute gifts and answers to a campaign's questions", () => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let browser: Browser;
  let tenant: Tenant;
  let campaign: typeof campaigns.$inferSelect;
  let plain: typeof campaigns.$inferSelect;
  let ownerEmail: string;
  let ownerCookie: string;

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };

  /** Starts a checkout on the campaign and completes it with these extras. */
  const give = async (slug: string, extras: Json, headers: Record<string, string> = {}) => {
    const base = `/api/v1/public/organizations/${tenant.slug}`;
    const started = await post(`${base}/campaigns/${slug}/checkouts/`, {});
    expect(started.status).toBe(201);
    return post(
      `${base}/checkouts/${started.body.id}/complete`,
      {
        client_secret: started.body.client_secret,
        amount: 30,
        frequency: 0,
        processor: "sandbox",
        card: { number: SANDBOX_CARDS.succeeds, exp_month: 12, exp_year: 2035, cvc: "123" },
        supporter: { first_name: "Anna", last_name: "Bianchi", email: `anna-${unique(6)}@example.test` },
        consents: { privacy: true },
        ...extras,
      },
      headers,
    );
  };

  const donationCount = async () => {
    const result = await server.database.db.execute<{ count: string }>(
      sql`select count(*) as count from donations where organization_id = ${tenant.organizationId}`,
    );
    return Number((result as unknown as { rows: { count: string }[] }).rows[0]?.count);
  };

  const graphql = async (query: string, variables: Json = {}) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
      body: JSON.stringify({ query, variables }),
    });
    return response.json();
  };

  const signIn = async (page: Page) => {
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", ownerEmail);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    [server, browser] = await Promise.all([
      startTestServer({ smtpUrl: smtp.url, mailFrom: "donations@donata.test" }),
      launchChromium(),
    ]);
    const db = server.database.db;
    tenant = await fakeTenant(db);
    campaign = await fakeCampaign(db, tenant.organizationId, {
      slug: `in-memory-${unique(6)}`,
      title: "School kits for every child",
      hasOneOff: true,
      hasSubscription: false,
      allowCustomAmount: true,
      minAmount: 5,
      maxAmount: 1000,
      asks: ["10", "30"],
      defaultAmount: 30,
      shownFields: ["first_name", "last_name", "email"],
      requiredFields: ["first_name", "last_name"],
      archiveDate: null,
    });
    // As the campaign editor saves them (helper columns written directly: the editor is another test's subject).
    [campaign] = (await db
      .update(campaigns)
      .set({ allowTribute: true, questions: QUESTIONS })
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, campaign.id)))
      .returning()) as [typeof campaigns.$inferSelect];
    plain = await fakeCampaign(db, tenant.organizationId, {
      slug: `plain-${unique(6)}`,
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 5,
      maxAmount: 1000,
      shownFields: ["first_name", "last_name", "email"],
      archiveDate: null,
    });
    ownerEmail = `owner-${unique(6)}@example.test`;
    const user = await createUser(db, {
      email: ownerEmail,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
    await db.update(users).set({ locale: "en" }).where(eq(users.id, user.id));
    const session = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: ownerEmail, password: PASSWORD }),
    });
    ownerCookie =
      session.headers
        .getSetCookie()
        .find((line) => line.startsWith("donata_session="))
        ?.split(";")[0] ?? "";
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  });

  it("tells the form whether it offers a tribute and which questions it asks", async () => {
    const shown = await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`);
    expect(shown.status).toBe(200);
    expect(shown.body.allow_tribute).toBe(true);
    expect(shown.body.questions).toEqual(QUESTIONS);
    const bare = await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${plain.slug}`);
    expect(bare.body).toMatchObject({ allow_tribute: false, questions: [] });
  });

  it("refuses a tribute or answers the campaign does not take, naming the field, and stores nothing", async () => {
    const before = await donationCount();
    const refusals: [string, Json, number, string, string][] = [
      [plain.slug as string, { tribute: TRIBUTE }, 422, "field_not_on_form", "tribute"],
      [
        campaign.slug as string,
        { tribute: TRIBUTE, answers: { ...ANSWERS, colour: "red" } },
        422,
        "field_not_on_form",
        "answers.colour",
      ],
      [
        campaign.slug as string,
        { answers: { ...ANSWERS, shirt_size: undefined } },
        422,
        "missing_required_field",
        "answers.shirt_size",
      ],
      [
        campaign.slug as string,
        { answers: { ...ANSWERS, newsletter_ok: false } },
        422,
        "missing_required_field",
        "answers.newsletter_ok",
      ],
      [
        campaign.slug as string,
        { answers: { ...ANSWERS, shirt_size: "XXL" } },
        400,
        "invalid_request",
        "answers.shirt_size",
      ],
      [
        campaign.slug as string,
        { answers: { ...ANSWERS, heard_from: ["TV"] } },
        400,
        "invalid_request",
        "answers.heard_from",
      ],
      [
        campaign.slug as string,
        { answers: { ...ANSWERS, company: "x".repeat(201) } },
        400,
        "invalid_request",
        "answers.company",
      ],
      [
        campaign.slug as string,
        { answers: { ...ANSWERS, newsletter_ok: "yes" } },
        400,
        "invalid_request",
        "answers.newsletter_ok",
      ],
      [
        campaign.slug as string,
        { answers: ANSWERS, tribute: { ...TRIBUTE, name: "   " } },
        400,
        "invalid_request",
        "tribute.name",
      ],
    ];
    for (const [slug, extras, status, code, field] of refusals) {
      const refused = await give(slug, extras);
      expect(refused.status, `${field}: ${JSON.stringify(refused.body)}`).toBe(status);
      expect(refused.body.code).toBe(code);
      expect(refused.body.errors.map((issue: { field: string }) => issue.field)).toEqual([field]);
    }
    // The schema's own checks: a tribute without its kind, an empty or too long name, an address that is not one.
    const malformed: [Json, string][] = [
      // A missing property is named by its whole path.
      [{ name: "Maria Rossi" }, "tribute.type"],
      [{ type: "memory", name: "" }, "tribute.name"],
      [{ type: "birthday", name: "Maria Rossi" }, "tribute.type"],
      [{ ...TRIBUTE, recipient_email: "not an address" }, "tribute.recipient_email"],
      [{ ...TRIBUTE, name: "x".repeat(201) }, "tribute.name"],
    ];
    for (const [tribute, field] of malformed) {
      const refused = await give(campaign.slug as string, { tribute, answers: ANSWERS });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.code).toBe("invalid_request");
      expect(refused.body.errors.map((issue: { field: string }) => issue.field)).toContain(field);
    }
    // Refusals in Italian name the same fields, in Italian words.
    const italian = await give(plain.slug as string, { tribute: TRIBUTE }, { "accept-language": "it-IT" });
    expect(italian.body.errors).toEqual([
      expect.objectContaining({
        field: "tribute",
        code: "tribute_not_offered",
        message: "questa campagna non accetta donazioni in onore o in memoria di qualcuno",
      }),
    ]);
    expect(await donationCount()).toBe(before);
  });

  it("refuses a required short-text question left out, empty or blank, and takes it answered", async () => {
    const db = server.database.db;
    const asking = await fakeCampaign(db, tenant.organizationId, {
      slug: `asking-${unique(6)}`,
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 5,
      maxAmount: 1000,
      shownFields: ["first_name", "last_name", "email"],
      archiveDate: null,
    });
    const question: CampaignQuestionWire = { key: "school", type: "short_text", label: "Your school", required: true };
    await db
      .update(campaigns)
      .set({ questions: [question] })
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, asking.id)));
    const before = await donationCount();
    for (const answers of [undefined, {}, { school: "" }, { school: "  \n " }]) {
      const refused = await give(asking.slug as string, answers === undefined ? {} : { answers });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.code).toBe("missing_required_field");
      expect(refused.body.errors).toEqual([
        expect.objectContaining({
          field: "answers.school",
          code: "answer_required",
          message: "this question needs an answer",
        }),
      ]);
    }
    expect(await donationCount()).toBe(before);
    const answered = await give(asking.slug as string, { answers: { school: " Scuola Manzoni " } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.donation.answers).toEqual([
      { key: "school", label: "Your school", type: "short_text", value: "Scuola Manzoni" },
    ]);
  });

  it("keeps the tribute and answers with the gift: REST, GraphQL, CSV, events, receipt and the recipient's notice in Italian", async () => {
    const done = await give(
      campaign.slug as string,
      { tribute: TRIBUTE, answers: ANSWERS },
      { "accept-language": "it-IT" },
    );
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const tribute = {
      type: "memory",
      name: "Maria Rossi",
      message: TRIBUTE.message,
      recipient_name: "Luca Rossi",
      recipient_email: TRIBUTE.recipient_email,
    };
    // In the campaign's order, each with its question as it was asked; a multiple choice in the options' order.
    const answers = [
      { key: "shirt_size", label: "T-shirt size", type: "single_choice", value: "M" },
      { key: "heard_from", label: "How did you hear about us?", type: "multiple_choice", value: ["Radio", "A friend"] },
      { key: "company", label: "Company", type: "short_text", value: "Acme" },
      { key: "newsletter_ok", label: "I agree to be named among our supporters", type: "checkbox", value: true },
    ];
    expect(done.body.donation).toMatchObject({ tribute, answers });
    const id = done.body.donation.id as number;

    // A later edit of a question keeps the old wording on the old gift.
    await server.database.db
      .update(campaigns)
      .set({ questions: QUESTIONS.map((question) => ({ ...question, label: `${question.label} (new)` })) })
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, campaign.id)));

    const rest = await server.get(`/api/v1/donations/${id}`, tenant.token);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ tribute, answers });
    const checkout = await server.get(`/api/v1/checkouts/${done.body.checkout_id}`, tenant.token);
    expect(checkout.body.donation).toMatchObject({ tribute, answers });
    const list = await server.get(`/api/v1/donations/?campaign_id=${campaign.id}`, tenant.token);
    expect(list.body.items.find((item: Json) => item.id === id)).toMatchObject({ tribute, answers });
    const untouched = await give(plain.slug as string, {});
    expect(untouched.body.donation).toMatchObject({ tribute: null, answers: [] });

    const { data, errors } = await graphql(
      `query ($id: ID!) { donation(id: $id) {
        tribute { type name message recipient_name recipient_email }
        answers { key label type text choices checked display }
      } }`,
      { id: String(id) },
    );
    expect(errors).toBeUndefined();
    expect(data.donation.tribute).toEqual(tribute);
    expect(data.donation.answers).toEqual([
      {
        key: "shirt_size",
        label: "T-shirt size",
        type: "single_choice",
        text: "M",
        choices: null,
        checked: null,
        display: "M",
      },
      {
        key: "heard_from",
        label: "How did you hear about us?",
        type: "multiple_choice",
        text: null,
        choices: ["Radio", "A friend"],
        checked: null,
        display: "Radio, A friend",
      },
      {
        key: "company",
        label: "Company",
        type: "short_text",
        text: "Acme",
        choices: null,
        checked: null,
        display: "Acme",
      },
      {
        key: "newsletter_ok",
        label: "I agree to be named among our supporters",
        type: "checkbox",
        text: null,
        choices: null,
        checked: true,
        display: "yes",
      },
    ]);

    const csv = await fetch(
      `${server.url}/admin/export/donations.csv?organization=${tenant.slug}&campaign_id=${campaign.id}`,
      {
        headers: { cookie: ownerCookie },
      },
    ).then((response) => response.text());
    const [header, ...rows] = csv.trimEnd().split("\r\n");
    expect(header?.split(",").slice(-6)).toEqual([
      "tribute_type",
      "tribute_name",
      "tribute_message",
      "tribute_recipient_name",
      "tribute_recipient_email",
      "answers",
    ]);
    expect(header).not.toContain("tribute_id");
    const row = rows.find((line) => line.startsWith(`${id},`));
    expect(row).toContain(
      `,memory,Maria Rossi,"Maria loved this school.\nWith love, Anna",Luca Rossi,${TRIBUTE.recipient_email},` +
        `"T-shirt size: M; How did you hear about us?: Radio, A friend; Company: Acme; I agree to be named among our supporters: yes"`,
    );

    const events = await server.get(`/api/v1/events/?type=donation.created&limit=100`, tenant.token);
    const created = events.body.items.find((event: Json) => event.data.id === id);
    expect(created.data).toMatchObject({ tribute, answers });
    const updated = await server.get(`/api/v1/events/?type=donation.updated&limit=100`, tenant.token);
    const paid = updated.body.items.find((event: Json) => event.data.id === id && event.data.state === "done");
    expect(paid.data).toMatchObject({ tribute, answers });

    // The receipt, in the donor's language: "In memoria di Maria Rossi", on the page and in the PDF.
    const receipts = await server.get(`/api/v1/receipts/?payment_id=${done.body.payment.id}`, tenant.token);
    const receipt = receipts.body.items[0];
    const html = await fetch(receipt.url).then((response) => response.text());
    expect(html).toContain("Dedica");
    expect(html).toContain("In memoria di Maria Rossi");
    const english = await fetch(`${receipt.url}?lang=en`).then((response) => response.text());
    expect(english).toContain("In memory of Maria Rossi");
    const pdf = Buffer.from(await (await fetch(`${receipt.url}/pdf`)).arrayBuffer());
    const document = mupdf.Document.openDocument(pdf, "application/pdf");
    const text = document
      .loadPage(0)
      .toStructuredText("")
      .asText()
      .replace(/\u00a0/g, " ");
    expect(text).toContain("In memoria di Maria Rossi");

    // The recipient's notice, once, in Italian (the donor's language), with the message and never the amount.
    const [notice, ...more] = await server.database.db
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.kind, "tribute_notice")));
    expect(more).toEqual([]);
    expect(notice).toMatchObject({ toAddress: TRIBUTE.recipient_email, donationId: id });
    await flushOutbox(server, tenant.organizationId);
    const [mail] = smtp
      .to(TRIBUTE.recipient_email)
      .filter((m) => m.headers.get("x-donata-message") === "tribute_notice");
    expect(mail?.subject).toBe("Anna Bianchi ha fatto una donazione in memoria di Maria Rossi");
    expect(mail?.text).toContain("Gentile Luca Rossi,");
    expect(mail?.text).toContain("Maria loved this school.");
    expect(mail?.text).toContain("School kits for every child");
    // Whole-word "30": the organization's random name (e.g. "Org 30f67b") may hold the digits.
    expect(mail?.text).not.toMatch(/\b30\b|€/);
    expect(mail?.html).not.toMatch(/30,00|€/);
  });

  it("a tribute without a recipient's address tells nobody", async () => {
    const done = await give(campaign.slug as string, {
      tribute: { type: "honor", name: "Giulia Verdi" },
      answers: { shirt_size: "S", newsletter_ok: true },
    });
    expect(done.status).toBe(200);
    expect(done.body.donation.tribute).toEqual({
      type: "honor",
      name: "Giulia Verdi",
      message: null,
      recipient_name: null,
      recipient_email: null,
    });
    const notices = await server.database.db
      .select()
      .from(outboxMessages)
      .where(
        and(
          eq(outboxMessages.organizationId, tenant.organizationId),
          eq(outboxMessages.donationId, done.body.donation.id),
        ),
      );
    expect(notices.map((message) => message.kind)).not.toContain("tribute_notice");
  });

  it("a notice names only who typed their name with the gift, never a stored record or an address; erasing the donor clears the gift's words", async () => {
    // Someone gives with the address of a known donor, typing another name: the notice must not speak in
    // the stored donor's name (anyone may give with any address), nor show the address.
    const email = `known-${unique(6)}@example.test`;
    const known = await give(campaign.slug as string, {
      supporter: { first_name: "Mario", last_name: "Verdi", email },
      answers: ANSWERS,
    });
    expect(known.status).toBe(200);
    const recipient = `notified-${unique(6)}@example.test`;
    const other = await give(campaign.slug as string, {
      supporter: { first_name: "Luigi", last_name: "Neri", email },
      tribute: { ...TRIBUTE, recipient_email: recipient },
      answers: ANSWERS,
    });
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(other.body.donation.supporter_id).toBe(known.body.donation.supporter_id);
    // A second gift to the same recipient the same day keeps its tribute and tells nobody again.
    const again = await give(campaign.slug as string, {
      tribute: { ...TRIBUTE, recipient_email: recipient.toUpperCase() },
      answers: ANSWERS,
    });
    expect(again.status).toBe(200);
    expect(again.body.donation.tribute.recipient_email).toBe(recipient.toUpperCase());
    await flushOutbox(server, tenant.organizationId);
    const mails = smtp.to(recipient).filter((m) => m.headers.get("x-donata-message") === "tribute_notice");
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail?.subject).toMatch(
      /^Luigi Neri (has made a gift in memory of|ha fatto una donazione in memoria di) Maria Rossi$/,
    );
    expect(`${mail?.subject} ${mail?.text}`).not.toContain("Mario");
    expect(`${mail?.subject} ${mail?.text}`).not.toContain(email);

    // Erased, the donor's gifts keep their amounts, not the people they named or the words they wrote.
    const erased = await graphql(`mutation ($id: ID!) { eraseSupporter(id: $id) { id } }`, {
      id: String(known.body.donation.supporter_id),
    });
    expect(erased.errors).toBeUndefined();
    const after = await server.get(`/api/v1/donations/${other.body.donation.id}`, tenant.token);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ tribute: null, answers: [], amount: 30 });
  });

  it("on the donation page: dedicate the gift, answer the questions, see it all in the panel (axe clean in en and it)", async () => {
    const context = await browser.newContext({ locale: "en-US", viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/donate/${tenant.slug}/${campaign.slug}?lang=en`);
    // Closed, the tribute's fields are hidden and not checked.
    expect(await page.locator("#tribute-fields").isHidden()).toBe(true);
    await page.getByLabel("Make this gift in honour or in memory of someone").check();
    await page.getByRole("radio", { name: "In memory of" }).check();
    await page.getByLabel("Their name").fill("Maria Rossi");
    await page.getByLabel("A message (optional)").fill("For Maria, who loved to read.");
    await page.getByLabel("Let someone know about this gift by email").check();
    await page.getByLabel("Recipient’s name").fill("Luca Rossi");
    const recipient = `luca-${unique(6)}@example.test`;
    await page.getByLabel("Recipient’s email").fill(recipient);
    let axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);

    await page.getByLabel("First name").fill("Anna");
    await page.getByLabel("Last name").fill("Bianchi");
    await page.getByRole("textbox", { name: "Email", exact: true }).fill(`anna-${unique(6)}@example.org`);
    await page.getByLabel("I have read the privacy notice").check();
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel("Expiry month").fill("12");
    await page.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
    await page.getByLabel("Security code").fill("123");

    // The required questions are asked before anything is sent.
    await page.getByRole("button", { name: /^Donate/ }).click();
    await page.locator("#e-f-answer-shirt-size", { hasText: /./ }).waitFor();
    expect(await page.locator("#e-f-answer-newsletter-ok").isVisible()).toBe(true);

    await page.getByRole("radio", { name: "L" }).check();
    await page.getByRole("checkbox", { name: "Social media" }).check();
    await page.getByLabel("Company").fill("Acme");
    await page.getByLabel("Why do you give?").fill("Books matter.");
    await page.getByLabel("I agree to be named among our supporters").check();
    const completion = page.waitForResponse((response) => /\/checkouts\/\d+\/complete$/.test(response.url()));
    await page.getByRole("button", { name: /^Donate/ }).click();
    const response = await completion;
    const sent = response.request().postDataJSON();
    expect(sent.tribute).toEqual({
      type: "memory",
      name: "Maria Rossi",
      message: "For Maria, who loved to read.",
      recipient_name: "Luca Rossi",
      recipient_email: recipient,
    });
    expect(sent.answers).toEqual({
      shirt_size: "L",
      heard_from: ["Social media"],
      company: "Acme",
      why: "Books matter.",
      newsletter_ok: true,
    });
    expect(response.status()).toBe(200);
    const { donation } = await response.json();

    // The same page in Italian, the sections open.
    await page.goto(`${server.url}/donate/${tenant.slug}/${campaign.slug}?lang=it`);
    await page.getByLabel("Fai questa donazione in onore o in memoria di qualcuno").check();
    await page.getByLabel("Avvisa qualcuno di questa donazione via email").check();
    axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);
    await context.close();

    // The panel's donation page: a Tribute section and an Answers section.
    const panel = await browser.newContext({ locale: "en-US", viewport: { width: 1280, height: 1000 } });
    const admin = await panel.newPage();
    await signIn(admin);
    await admin.goto(`${server.url}/admin/o/${tenant.slug}/donations/${donation.id}`);
    const tributeSection = admin.locator("#donation-tribute");
    await tributeSection.locator("[data-testid=tribute-dedication]", { hasText: "In memory of Maria Rossi" }).waitFor();
    await tributeSection.getByText("For Maria, who loved to read.").waitFor();
    await tributeSection.getByText(`Luca Rossi <${recipient}>`).waitFor();
    const answersSection = admin.locator("#donation-answers");
    await answersSection.getByText("T-shirt size").waitFor();
    await answersSection.getByText("Social media").waitFor();
    await answersSection.getByText("Books matter.").waitFor();
    axe = await new AxeBuilder({ page: admin }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);
    // In Italian (the member's saved choice), the same sections in Italian words, and axe clean too.
    await admin.getByTestId("language-switcher").selectOption("it");
    await tributeSection
      .locator("[data-testid=tribute-dedication]", { hasText: "In memoria di Maria Rossi" })
      .waitFor();
    await admin.locator("#donation-tribute h2", { hasText: "Donazione in onore o in memoria" }).waitFor();
    axe = await new AxeBuilder({ page: admin }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);
    await admin.getByTestId("language-switcher").selectOption("en");
    await panel.close();
  });

  it("a server's refusal lands under the right input of the page", async () => {
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${server.url}/donate/${tenant.slug}/${campaign.slug}?lang=en`);
    // The question is edited while the donor fills the form: the server refuses the old choice.
    await server.database.db
      .update(campaigns)
      .set({
        questions: QUESTIONS.map((question) =>
          question.key === "shirt_size" ? { ...question, options: ["XS", "XL"] } : question,
        ),
      })
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, campaign.id)));
    await page.getByLabel("First name").fill("Anna");
    await page.getByLabel("Last name").fill("Bianchi");
    await page.getByRole("textbox", { name: "Email", exact: true }).fill(`anna-${unique(6)}@example.org`);
    await page.getByLabel("I have read the privacy notice").check();
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel("Expiry month").fill("12");
    await page.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
    await page.getByLabel("Security code").fill("123");
    await page.getByRole("radio", { name: "M" }).check();
    await page.getByLabel("I agree to be named among our supporters").check();
    const completion = page.waitForResponse((response) => /\/checkouts\/\d+\/complete$/.test(response.url()));
    await page.getByRole("button", { name: /^Donate/ }).click();
    expect((await completion).status()).toBe(400);
    await page.locator("#e-f-answer-shirt-size", { hasText: /./ }).waitFor();
    expect(await page.locator("#f-answer-shirt-size-0").getAttribute("aria-invalid")).toBe("true");
    await context.close();
    await server.database.db
      .update(campaigns)
      .set({ questions: QUESTIONS })
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, campaign.id)));
  });
});
