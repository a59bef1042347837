import AxeBuilder from "@axe-core/playwright";
import { and, eq, sql } from "drizzle-orm";
import type { Browser } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaigns } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";

/**
 * A campaign's content (docs/campaigns.md): story, cover image, draft or published, dates, impact
 * lines, questions and tribute gifts, through REST and GraphQL, and what the donation page shows.
 */
describe("campaign content", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let ownerCookie: string;
  let memberCookie: string;

  const send = async (method: string, path: string, body?: unknown, token = tenant.token) =>
    readResponse(
      await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  const create = (body: Record<string, unknown>) => send("POST", "/api/v1/campaigns/", body);
  const patch = (id: number, body: Record<string, unknown>) => send("PATCH", `/api/v1/campaigns/${id}`, body);
  const publicCampaign = (slug: string) =>
    fetch(`${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${slug}`).then(readResponse);
  const startCheckout = (slug: string) =>
    fetch(`${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${slug}/checkouts/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount: 30, frequency: 0 }),
    }).then(readResponse);
  const page = (slug: string, lang = "en") =>
    fetch(`${server.url}/donate/${tenant.slug}/${slug}?lang=${lang}`).then(async (response) => ({
      status: response.status,
      csp: response.headers.get("content-security-policy") ?? "",
      html: await response.text(),
    }));
  const cookieOf = async (role: "owner" | "member") => {
    const user = await createUser(server.database.db, {
      email: `${role}-${unique(6)}@example.test`,
      password: "long enough password",
      organization: tenant.slug,
      role,
    });
    return `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
  };
  const rowOf = async (id: number) =>
    (await server.database.db.select().from(campaigns).where(eq(campaigns.id, id)))[0];

  const STORY = [
    "## Why it matters",
    "",
    "Every *child* deserves a **school kit**. Read [our report](https://example.org/report).",
    "",
    "<script>alert('story')</script> <b onclick=\"steal()\">raw html</b>",
    "",
    '[click me](javascript:alert(1)) and <a href="https://evil.example">html link</a>',
    "",
    "- pens",
    "- books",
  ].join("\n");

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { timeZone: "Europe/Rome" });
    ownerCookie = await cookieOf("owner");
    memberCookie = await cookieOf("member");
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  describe("REST", () => {
    it("replays a create stored before the page content existed with that content's defaults", async () => {
      const key = `old-create-${unique(8)}`;
      const body = { title: "Older campaign", slug: `older-${unique(6)}` };
      const post = () =>
        fetch(`${server.url}/api/v1/campaigns/`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${tenant.token}`,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          body: JSON.stringify(body),
        }).then(readResponse);
      const first = await post();
      expect(first.status).toBe(201);
      // The outcome as an earlier version stored it: without the fields added since.
      await server.database.db.execute(
        sql`update idempotency_keys set body = body - 'story' - 'cover_image_url' - 'status' - 'start_date' - 'end_date'
              - 'ask_impacts' - 'questions' - 'allow_tribute'
            where organization_id = ${tenant.organizationId} and key = ${key}`,
      );
      const replayed = await post();
      expect(replayed.status).toBe(201);
      expect(replayed.body).toEqual(first.body);
    });

    it("creates a campaign with every content field, reads it back, and patches each", async () => {
      const created = await create({
        title: "School kits",
        slug: `kits-${unique(6)}`,
        story: STORY,
        status: "draft",
        start_date: "2026-01-01T00:00:00.000Z",
        end_date: "2036-01-01T00:00:00.000Z",
        asks: [10, 30, 50],
        asks_subscription: [15],
        ask_impacts: [
          { amount: 30, recurring: false, text: "buys a school kit" },
          { amount: 15, recurring: true, text: "a book a month" },
        ],
        questions: [
          { type: "single_choice", label: "T-shirt size", required: true, options: ["S", "M", "L"] },
          { key: "heard", type: "short_text", label: "How did you hear about us?" },
          { type: "checkbox", label: "T-shirt size" },
        ],
        allow_tribute: true,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({
        story: STORY,
        cover_image_url: null,
        status: "draft",
        start_date: "2026-01-01T00:00:00.000Z",
        end_date: "2036-01-01T00:00:00.000Z",
        ask_impacts: [
          { amount: 30, recurring: false, text: "buys a school kit" },
          { amount: 15, recurring: true, text: "a book a month" },
        ],
        questions: [
          {
            key: "t_shirt_size",
            type: "single_choice",
            label: "T-shirt size",
            required: true,
            options: ["S", "M", "L"],
          },
          { key: "heard", type: "short_text", label: "How did you hear about us?", required: false },
          { key: "t_shirt_size_2", type: "checkbox", label: "T-shirt size", required: false },
        ],
        allow_tribute: true,
      });
      const id = created.body.id as number;
      expect((await send("GET", `/api/v1/campaigns/${id}`)).body).toEqual(created.body);
      // Stored as decimal strings, as money is.
      expect((await rowOf(id))?.askImpacts).toEqual([
        { amount: "30.00", recurring: false, text: "buys a school kit" },
        { amount: "15.00", recurring: true, text: "a book a month" },
      ]);

      const patched = await patch(id, {
        story: null,
        status: "published",
        start_date: null,
        ask_impacts: [],
        questions: [],
        allow_tribute: false,
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({
        story: null,
        status: "published",
        start_date: null,
        end_date: "2036-01-01T00:00:00.000Z",
        ask_impacts: [],
        questions: [],
        allow_tribute: false,
      });
      const updates = (await auditRowsOf(server.database.db, tenant.organizationId, ["campaign.updated"])).filter(
        (event) => (event.data as { id: number }).id === id,
      );
      expect(updates.length).toBe(1);
    });

    it("defaults: published, no story, no dates, no lines, no questions, no tribute", async () => {
      const created = await create({ title: "Plain" });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        story: null,
        cover_image_url: null,
        status: "published",
        start_date: null,
        end_date: null,
        ask_impacts: [],
        questions: [],
        allow_tribute: false,
      });
    });

    it("makes a slug from the title, unique in the organization, and keeps explicit ones", async () => {
      const title = `Caffè Sospeso ${unique(4)} — Natale!`;
      const expected = title
        .toLowerCase()
        .replace("è", "e")
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/-+$/, "");
      const first = await create({ title });
      const second = await create({ title });
      const third = await create({ title });
      expect([first.body.slug, second.body.slug, third.body.slug]).toEqual([
        expected,
        `${expected}-2`,
        `${expected}-3`,
      ]);
      const other = await fakeTenant(server.database.db);
      const elsewhere = await send("POST", "/api/v1/campaigns/", { title }, other.token);
      expect(elsewhere.body.slug).toBe(expected);
      const explicit = await create({ title, slug: `own-${unique(6)}` });
      expect(explicit.body.slug).toMatch(/^own-/);
      const taken = await create({ title: "Again", slug: explicit.body.slug });
      expect(taken.status).toBe(409);
      expect((await create({ title: "!!!" })).body.slug).toMatch(/^campaign(-\d+)?$/);
    });

    it("refuses bad content with a 4xx naming the field, and changes nothing", async () => {
      const base = await create({ title: "Refusals", asks: [10, 30], asks_subscription: [15] });
      const id = base.body.id as number;
      const before = await rowOf(id);
      const cases: [Record<string, unknown>, number, string, string | undefined][] = [
        [{ story: "x".repeat(20_001) }, 400, "story", undefined],
        [{ status: "live" }, 400, "status", undefined],
        [{ start_date: "tomorrow" }, 400, "start_date", undefined],
        [
          { start_date: "2026-03-01T00:00:00.000Z", end_date: "2026-03-01T00:00:00.000Z" },
          400,
          "end_date",
          "end_after_start",
        ],
        [
          { ask_impacts: [{ amount: 20, recurring: false, text: "x" }] },
          400,
          "ask_impacts.0.amount",
          "impact_not_an_ask",
        ],
        [
          { ask_impacts: [{ amount: 10, recurring: true, text: "x" }] },
          400,
          "ask_impacts.0.amount",
          "impact_not_a_recurring_ask",
        ],
        [
          {
            ask_impacts: [
              { amount: 10, recurring: false, text: "x" },
              { amount: 10, recurring: false, text: "y" },
            ],
          },
          400,
          "ask_impacts.1.amount",
          "impact_repeated",
        ],
        [{ ask_impacts: [{ amount: 10, recurring: false, text: "" }] }, 400, "ask_impacts.0.text", undefined],
        [
          {
            questions: [
              { key: "size", type: "short_text", label: "A" },
              { key: "size", type: "long_text", label: "B" },
            ],
          },
          400,
          "questions.1.key",
          "question_key_repeated",
        ],
        [
          { questions: [{ type: "single_choice", label: "Size", options: ["M"] }] },
          400,
          "questions.0.options",
          "question_options_needed",
        ],
        [
          { questions: [{ type: "multiple_choice", label: "Size", options: ["M", "m"] }] },
          400,
          "questions.0.options",
          "question_options_repeated",
        ],
        [
          { questions: [{ type: "checkbox", label: "Agree", options: ["yes", "no"] }] },
          400,
          "questions.0.options",
          "question_options_not_allowed",
        ],
        [{ questions: [{ type: "date", label: "When" }] }, 400, "questions.0.type", undefined],
        [{ questions: [{ type: "short_text", label: "A", key: "Bad Key" }] }, 400, "questions.0.key", undefined],
        [
          {
            questions: Array.from({ length: 21 }, (_, index) => ({ type: "short_text", label: `Q${index}` })),
          },
          400,
          "questions",
          undefined,
        ],
        [{ allow_tribute: "yes" }, 400, "allow_tribute", undefined],
        [{ cover_image_url: "https://example.org/cover.jpg" }, 400, "cover_image_url", undefined],
      ];
      for (const [body, status, field, code] of cases) {
        const response = await patch(id, body);
        expect(response.status, JSON.stringify(body)).toBe(status);
        const issue = (response.body.errors as { field: string; code?: string }[]).find((e) => e.field === field);
        expect(issue, `${JSON.stringify(body)} → ${JSON.stringify(response.body.errors)}`).toBeDefined();
        if (code) expect(issue?.code).toBe(code);
      }
      // Italian words for the same problem.
      const italian = await readResponse(
        await fetch(`${server.url}/api/v1/campaigns/${id}`, {
          method: "PATCH",
          headers: {
            authorization: `Bearer ${tenant.token}`,
            "content-type": "application/json",
            "accept-language": "it",
          },
          body: JSON.stringify({ start_date: "2026-03-02T00:00:00.000Z", end_date: "2026-03-01T00:00:00.000Z" }),
        }),
      );
      expect(italian.body.errors[0].message).toBe("deve essere successiva a start_date");
      expect(await rowOf(id)).toEqual(before);
      // Creating refuses the same way, and creates nothing.
      const refused = await create({
        title: "Never",
        slug: `never-${unique(6)}`,
        ask_impacts: [{ amount: 5, recurring: false, text: "x" }],
      });
      expect(refused.status).toBe(400);
      expect((await publicCampaign(String(refused.body.slug))).status).toBe(404);
    });

    it("GraphQL creates and updates the same fields", async () => {
      const graphql = async (query: string, variables: Record<string, unknown>) =>
        readResponse(
          await fetch(`${server.url}/admin/graphql/`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
            body: JSON.stringify({ query, variables }),
          }),
        );
      const fields =
        "id slug story status start_date end_date cover_image_url allow_tribute ask_impacts { amount recurring text } questions { key type label required options }";
      const created = await graphql(
        `mutation($input: CampaignInput!) { createCampaign(input: $input) { ${fields} } }`,
        {
          input: {
            title: `GraphQL kits ${unique(4)}`,
            story: "Hello *world*",
            status: "draft",
            asks: [25],
            ask_impacts: [{ amount: 25, recurring: false, text: "a week of meals" }],
            questions: [{ type: "multiple_choice", label: "Topics", options: ["Water", "Schools"] }],
            allow_tribute: true,
          },
        },
      );
      expect(created.body.errors).toBeUndefined();
      const campaign = created.body.data.createCampaign;
      expect(campaign).toMatchObject({
        story: "Hello *world*",
        status: "draft",
        cover_image_url: null,
        allow_tribute: true,
        ask_impacts: [{ amount: 25, recurring: false, text: "a week of meals" }],
        questions: [
          { key: "topics", type: "multiple_choice", label: "Topics", required: false, options: ["Water", "Schools"] },
        ],
      });
      expect(campaign.slug).toMatch(/^graphql-kits-/);
      const updated = await graphql(
        `mutation($id: ID!, $input: CampaignPatch!) { updateCampaign(id: $id, input: $input) { ${fields} } }`,
        { id: campaign.id, input: { status: "published", end_date: "2020-01-01T00:00:00.000Z", questions: [] } },
      );
      expect(updated.body.errors).toBeUndefined();
      expect(updated.body.data.updateCampaign).toMatchObject({
        status: "published",
        end_date: "2020-01-01T00:00:00.000Z",
        questions: [],
      });
      const refused = await graphql(
        `mutation($id: ID!, $input: CampaignPatch!) { updateCampaign(id: $id, input: $input) { id } }`,
        { id: campaign.id, input: { ask_impacts: [{ amount: 99, recurring: false, text: "x" }] } },
      );
      expect(refused.body.errors[0].extensions.code).toBe("invalid_request");
    });
  });

  describe("the donation page", () => {
    it("draft: the page and the public API answer 404; published: both answer", async () => {
      const slug = `draft-${unique(6)}`;
      const created = await create({ title: "Draft", slug, status: "draft", asks: [30] });
      expect((await page(slug)).status).toBe(404);
      expect((await publicCampaign(slug)).status).toBe(404);
      expect((await startCheckout(slug)).status).toBe(404);
      await patch(created.body.id, { status: "published" });
      expect((await page(slug)).status).toBe(200);
      expect((await publicCampaign(slug)).status).toBe(200);
    });

    it("ended or not open yet: title, story and notice in the organization's time zone, no form; checkouts 410", async () => {
      const ended = `ended-${unique(6)}`;
      await create({
        title: "Winter appeal",
        slug: ended,
        story: "We did it *together*.",
        asks: [30],
        start_date: "2026-01-01T00:00:00.000Z",
        // Midnight of 13 March in Rome: the last day of gifts was the 12th.
        end_date: "2026-03-12T23:00:00.000Z",
      });
      const en = await page(ended);
      expect(en.status).toBe(200);
      expect(en.html).toContain("This campaign ended on March 12, 2026.");
      expect(en.html).toContain("<p>We did it <em>together</em>.</p>");
      expect(en.html).not.toContain('id="donate-form"');
      expect((await page(ended, "it")).html).toContain("Questa campagna si è conclusa il 12 marzo 2026.");
      const api = await publicCampaign(ended);
      expect(api.status).toBe(200);
      expect(api.body).toMatchObject({
        is_open: false,
        end_date: "2026-03-12T23:00:00.000Z",
        story: "We did it *together*.",
      });
      const refused = await startCheckout(ended);
      expect(refused.status).toBe(410);
      expect(refused.body.code).toBe("campaign_closed");

      const later = `later-${unique(6)}`;
      await create({ title: "Spring appeal", slug: later, asks: [30], start_date: "2099-04-01T08:00:00.000Z" });
      const soon = await page(later);
      expect(soon.html).toContain("This campaign opens on April 1, 2099 at 10:00");
      expect(soon.html).not.toContain('id="donate-form"');
      expect((await page(later, "it")).html).toContain("Questa campagna aprirà il 1 aprile 2099");
      const early = await startCheckout(later);
      expect(early.status).toBe(409);
      expect(early.body.code).toBe("campaign_not_open");
    });

    it("refuses to complete a checkout started while the campaign was open once its end_date has passed", async () => {
      const slug = `closing-${unique(6)}`;
      const created = await create({ title: "Last call", slug, asks: [30], end_date: "2099-01-01T00:00:00.000Z" });
      const started = await startCheckout(slug);
      expect(started.status).toBe(201);
      // The campaign ends while the donor fills in the form.
      await server.database.db
        .update(campaigns)
        .set({ endDate: new Date(Date.now() - 60_000) })
        .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, created.body.id)));
      const completed = await fetch(
        `${server.url}/api/v1/public/organizations/${tenant.slug}/checkouts/${started.body.id}/complete`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            client_secret: started.body.client_secret,
            amount: 30,
            frequency: 0,
            processor: "sandbox",
            card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
            supporter: { first_name: "Ada", last_name: "Lovelace", email: `ada-${unique(6)}@example.test` },
            consents: { privacy: true },
          }),
        },
      ).then(readResponse);
      expect(completed.status, JSON.stringify(completed.body)).toBe(410);
      expect(completed.body).toMatchObject({
        code: "campaign_closed",
        detail: "This campaign has ended and no longer accepts donations",
      });
      // Nothing was charged: the checkout is still open, with no donation or payment.
      const checkout = await send("GET", `/api/v1/checkouts/${started.body.id}`);
      expect(checkout.status).toBe(200);
      expect(checkout.body).toMatchObject({ state: "OPEN", donation: null, payment: null });
    });

    it("renders the story sanitised: no script, no javascript: link, no raw HTML", async () => {
      const slug = `story-${unique(6)}`;
      await create({ title: "Story", slug, story: STORY, asks: [30] });
      const { html, status } = await page(slug);
      expect(status).toBe(200);
      const story = /<section class="story"[^>]*>([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
      expect(story).toContain("<h2>Why it matters</h2>");
      expect(story).toContain(
        '<a href="https://example.org/report" rel="noopener noreferrer nofollow ugc" target="_blank">our report</a>',
      );
      expect(story).toContain("<li>pens</li>");
      // Raw HTML shows as text (a bare address in it still becomes a plain link, as any address does).
      expect(story).not.toMatch(/<script|<b\b|<[^>]*\sonclick=|href="javascript|>html link<\/a>/i);
      expect(story).toContain("&lt;script&gt;");
      expect(story).toContain("&lt;a href=");
      expect(story).toContain("[click me](javascript:alert(1))");
    });

    it("uploads a cover: renditions served, srcset on the page, audited; members and bad files refused", async () => {
      const slug = `cover-${unique(6)}`;
      const created = await create({ title: "Cover", slug, asks: [30] });
      const id = created.body.id as number;
      const picture = await sharp({
        create: { width: 2000, height: 1000, channels: 3, background: { r: 20, g: 120, b: 90 } },
      })
        .jpeg()
        .toBuffer();
      const upload = (body: Buffer, type: string, cookie = ownerCookie, campaign: number | string = id) =>
        fetch(`${server.url}/admin/campaigns/${campaign}/cover?organization=${tenant.slug}`, {
          method: "PUT",
          headers: { "content-type": type, origin: server.url, cookie },
          body: new Uint8Array(body),
        }).then(readResponse);

      expect((await upload(picture, "image/jpeg", memberCookie)).status).toBe(403);
      expect((await upload(picture, "image/jpeg", "")).status).toBe(401);
      expect((await upload(Buffer.from("<svg/>"), "image/svg+xml")).status).toBe(415);
      expect((await upload(picture, "image/png")).status).toBe(422);
      const small = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#fff" } })
        .png()
        .toBuffer();
      expect((await upload(small, "image/png")).status).toBe(422);
      expect((await upload(picture, "image/jpeg", ownerCookie, 999_999_999)).status).toBe(404);
      // Over 5 MB: refused before the image is read.
      const tooLarge = await upload(Buffer.alloc(5 * 1024 * 1024 + 1, 1), "image/jpeg");
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect((await rowOf(id))?.coverImageUrl).toBeNull();

      const uploaded = await upload(picture, "image/jpeg");
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
      const url = uploaded.body.cover_image_url as string;
      expect(url).toMatch(
        new RegExp(`^${server.url}/images/${tenant.organizationId}/img_[A-Za-z0-9_-]{22}/1600\\.jpg$`),
      );
      for (const width of [480, 960, 1600]) {
        const image = await fetch(url.replace(/1600\.jpg$/, `${width}.jpg`));
        expect(image.status).toBe(200);
        expect(image.headers.get("content-type")).toBe("image/jpeg");
        // A rendition's address never serves other bytes: cached for a year, revalidated by its ETag.
        expect(image.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
        const etag = image.headers.get("etag") ?? "";
        expect(etag).toMatch(/^"[^"]+"$/);
        expect((await sharp(Buffer.from(await image.arrayBuffer())).metadata()).width).toBe(width);
        const again = await fetch(image.url, { headers: { "if-none-match": etag } });
        expect(again.status).toBe(304);
        expect((await again.arrayBuffer()).byteLength).toBe(0);
      }
      const path = new URL(url).pathname.replace(/\/1600\.jpg$/, "");
      const { html, csp } = await page(slug);
      expect(html).toContain(`srcset="${path}/480.jpg 480w, ${path}/960.jpg 960w, ${path}/1600.jpg 1600w"`);
      expect(html).toContain(`src="${path}/480.jpg"`);
      expect(csp).toContain("img-src 'self' data:");
      expect((await publicCampaign(slug)).body.cover_image_url).toBe(url);
      const covers = (await auditRowsOf(server.database.db, tenant.organizationId, ["campaign.updated"])).filter(
        (event) => (event.data as { id: number; cover_image_url: string | null }).cover_image_url === url,
      );
      expect(covers.length).toBe(1);
      expect(covers[0]?.actor).toMatchObject({ type: "user" });

      const removed = await readResponse(
        await fetch(`${server.url}/admin/campaigns/${id}/cover?organization=${tenant.slug}`, {
          method: "DELETE",
          headers: { origin: server.url, cookie: ownerCookie },
        }),
      );
      expect(removed.status).toBe(200);
      expect(removed.body.cover_image_url).toBeNull();
      expect((await page(slug)).html).not.toContain('class="cover"');
      // Put back, for the browser test below.
      await upload(picture, "image/jpeg");
    });

    it("chromium: cover, story and impact lines shown; axe finds nothing in English and Italian", async () => {
      const slug = `shown-${unique(6)}`;
      const created = await create({
        title: "Clean water for Lamu",
        slug,
        story: "## The well\n\nA new **well** for 400 families. [Read more](https://example.org/lamu).",
        asks: [10, 30, 50],
        default_amount: 30,
        ask_impacts: [
          { amount: 30, recurring: false, text: "buys a water filter" },
          { amount: 50, recurring: false, text: "a month of clean water for a family" },
        ],
      });
      const picture = await sharp({
        create: { width: 1200, height: 700, channels: 3, background: { r: 30, g: 90, b: 160 } },
      })
        .jpeg()
        .toBuffer();
      await fetch(`${server.url}/admin/campaigns/${created.body.id}/cover?organization=${tenant.slug}`, {
        method: "PUT",
        headers: { "content-type": "image/jpeg", origin: server.url, cookie: ownerCookie },
        body: new Uint8Array(picture),
      });
      for (const lang of ["en", "it"] as const) {
        const context = await browser.newContext({ locale: lang === "it" ? "it-IT" : "en-US" });
        const tab = await context.newPage();
        const violations: string[] = [];
        tab.on("console", (message) => {
          if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
        });
        await tab.goto(`${server.url}/donate/${tenant.slug}/${slug}?lang=${lang}`);
        await tab.locator("#story h2", { hasText: "The well" }).waitFor();
        // The cover loaded (a width the screen needs), under the page's CSP.
        await tab.waitForFunction(() => {
          const cover = document.getElementById("cover") as HTMLImageElement | null;
          return cover?.complete && cover.naturalWidth > 0;
        });
        await tab.getByRole("radio", { name: /buys a water filter/ }).waitFor();
        expect(await tab.getByRole("radio", { name: /buys a water filter/ }).isChecked()).toBe(true);
        const axe = await new AxeBuilder({ page: tab }).withTags(["wcag2a", "wcag2aa"]).analyze();
        expect(axe.violations.map((violation) => violation.id)).toEqual([]);
        expect(violations).toEqual([]);
        await context.close();
      }
    });
  });
});
