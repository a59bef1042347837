import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { and, count, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imports, supporters } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { startImportRunner } from "../src/jobs/import.job.js";
import { runQueuedImports } from "../src/modules/imports/imports.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const GIVEBUTTER = readFileSync(new URL("./fixtures/import/givebutter-contacts.csv", import.meta.url));
const GIFTS = readFileSync(new URL("./fixtures/import/givebutter-transactions.csv", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;

const IMPORT_FIELDS = `id kind file_name preset dry_run state rows_total rows_done created updated unchanged refused
  error results_url mapping { column field } refused_rows { line external_id problems { column field message } }`;

/**
 * The panel's imports through the real server (docs/import.md): the upload's every refusal a 4xx that
 * stores nothing, owners and admins only, one organization's imports; the worker's run of a queued
 * file, its progress, counts and results CSV.
 */
describe("imports from the panel", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: { id: number; cookie: string };
  let member: { id: number; cookie: string };
  let outsider: { id: number; cookie: string };

  const signedIn = async (organization: string, role: "owner" | "admin" | "member") => {
    const user = await createUser(server.database.db, {
      email: `${role}-${unique(6)}@example.test`,
      password: "long enough password",
      organization,
      role,
    });
    return {
      id: user.id,
      cookie: `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`,
    };
  };

  const post = (
    path: "/admin/imports" | "/admin/imports/preview",
    body: Buffer | string | undefined,
    query: Record<string, string>,
    options: { cookie?: string; slug?: string; origin?: string; contentType?: string } = {},
  ) =>
    fetch(`${server.url}${path}?${new URLSearchParams({ organization: options.slug ?? tenant.slug, ...query })}`, {
      method: "POST",
      headers: {
        ...(options.contentType === "" ? {} : { "content-type": options.contentType ?? "text/csv" }),
        origin: options.origin ?? server.url,
        ...(options.cookie === "" ? {} : { cookie: options.cookie ?? owner.cookie }),
      },
      body: typeof body === "string" ? body : body && new Uint8Array(body),
    });
  const problemOf = async (response: Response) => ({ status: response.status, body: (await response.json()) as Json });

  const graphql = async (query: string, variables: Record<string, unknown>, cookie: string, organization: string) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-donata-organization": organization },
      body: JSON.stringify({ query, variables }),
    });
    expect(response.status).toBeLessThan(500);
    return (await response.json()) as Json;
  };
  const importOf = async (id: number, cookie = owner.cookie, organization = tenant.slug) =>
    graphql(`query ($id: ID!) { import(id: $id) { ${IMPORT_FIELDS} } }`, { id }, cookie, organization);

  const importCount = async (organizationId: number) =>
    (await server.database.db.select({ n: count() }).from(imports).where(eq(imports.organizationId, organizationId)))[0]
      ?.n;
  const supporterCount = async (organizationId: number) =>
    (
      await server.database.db
        .select({ n: count() })
        .from(supporters)
        .where(eq(supporters.organizationId, organizationId))
    )[0]?.n;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
    owner = await signedIn(tenant.slug, "owner");
    member = await signedIn(tenant.slug, "member");
    outsider = await signedIn(other.slug, "owner");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("previews a file: its columns with the preset's fields, the mapping over them, its first rows; nothing stored", async () => {
    const response = await post("/admin/imports/preview", GIVEBUTTER, {
      kind: "supporters",
      preset: "givebutter",
      file_name: "contacts.csv",
      mapping: JSON.stringify({ Notes: "ignore", Employer: "job", Title: "ignore" }),
    });
    expect(response.status).toBe(200);
    const preview = (await response.json()) as Json;
    expect(preview).toMatchObject({
      kind: "supporters",
      file_name: "contacts.csv",
      preset: "givebutter",
      problems: [],
    });
    expect(preview.fields).toContain("email");
    expect(preview.fields).toContain("external_id");
    const fieldOf = Object.fromEntries(
      preview.columns.map((column: { name: string; field: string | null }) => [column.name, column.field]),
    );
    expect(fieldOf).toMatchObject({
      "Givebutter Contact ID": "external_id",
      "Primary Email": "email",
      "First Name": "first_name",
      Employer: "job",
      Title: null,
      Notes: null,
      "Total Contributions": null,
    });
    expect(preview.columns).toHaveLength(38);
    expect(preview.rows).toHaveLength(5);
    expect(preview.rows[0].slice(0, 4)).toEqual(["GB-1001", "2023-02-14 09:12:00", "Ms.", "Maria"]);
    expect(preview.rows[2]).toHaveLength(38);

    // A file no field's name matches: the editor is shown, and says what is missing.
    const bare = await post("/admin/imports/preview", "Codice;Posta\n1;anna@example.org\n", { kind: "supporters" });
    expect(bare.status).toBe(200);
    expect(await bare.json()).toMatchObject({
      columns: [
        { name: "Codice", field: null },
        { name: "Posta", field: null },
      ],
      rows: [["1", "anna@example.org"]],
      problems: ["no column names a supporter's email, name, business name or external id: give a mapping"],
    });
    expect(await importCount(tenant.organizationId)).toBe(0);
  });

  it("refuses every bad upload with a clear 4xx and stores nothing", async () => {
    const supporters = { kind: "supporters", preset: "givebutter" };
    expect(await problemOf(await post("/admin/imports", undefined, supporters, { contentType: "" }))).toMatchObject({
      status: 400,
      body: { code: "invalid_request", detail: "The file cannot be imported: it is empty" },
    });
    expect(
      await problemOf(await post("/admin/imports", Buffer.from("Nome,Città\nAnna,Forl\xec\n", "latin1"), supporters)),
    ).toMatchObject({
      status: 400,
      body: {
        code: "invalid_request",
        detail: "The file cannot be imported: it is not UTF-8 text (save it as CSV UTF-8)",
        errors: [{ field: "file", message: "it is not UTF-8 text (save it as CSV UTF-8)" }],
      },
    });
    expect(await problemOf(await post("/admin/imports", GIVEBUTTER, { kind: "campaigns" }))).toMatchObject({
      status: 400,
      body: {
        code: "invalid_request",
        errors: [{ parameter: "kind", message: "must be one of: supporters, donations" }],
      },
    });
    expect(
      await problemOf(await post("/admin/imports", GIVEBUTTER, { kind: "supporters", preset: "mailchimp" })),
    ).toMatchObject({
      status: 400,
      body: { errors: [{ parameter: "preset", message: "must be one of: givebutter, donorbox" }] },
    });
    expect(
      await problemOf(await post("/admin/imports", GIVEBUTTER, { ...supporters, mapping: "Email=email" })),
    ).toMatchObject({ status: 400, body: { errors: [{ parameter: "mapping" }] } });
    expect(
      await problemOf(
        await post("/admin/imports", GIVEBUTTER, { ...supporters, mapping: JSON.stringify({ "E-mail": "email" }) }),
      ),
    ).toEqual({
      status: 400,
      body: expect.objectContaining({
        code: "invalid_request",
        detail: 'The file cannot be imported: the mapping names the column "E-mail", which the file does not have',
        errors: [
          { parameter: "mapping", message: 'the mapping names the column "E-mail", which the file does not have' },
        ],
      }),
    });
    expect(
      await problemOf(
        await post("/admin/imports", GIVEBUTTER, { ...supporters, mapping: JSON.stringify({ Notes: "hobby" }) }),
      ),
    ).toMatchObject({ status: 400, body: { detail: expect.stringContaining('the mapping\'s field "hobby"') } });
    expect(
      await problemOf(await post("/admin/imports", GIVEBUTTER, { ...supporters, dry_run: "maybe" })),
    ).toMatchObject({ status: 400, body: { errors: [{ parameter: "dry_run", message: "must be true or false" }] } });
    expect(
      await problemOf(await post("/admin/imports", "Codice;Posta\n1;anna@example.org\n", { kind: "supporters" })),
    ).toMatchObject({ status: 400, body: { detail: expect.stringContaining("no column names a supporter's email") } });
    expect(
      await problemOf(
        await post("/admin/imports", GIVEBUTTER, supporters, { contentType: "multipart/form-data; boundary=x" }),
      ),
    ).toMatchObject({ status: 415, body: { code: "unsupported_media_type" } });

    // A file over 50 MB is refused from its Content-Length, before its body is read.
    const tooLarge = await new Promise<{ status: number; body: Json }>((resolve, reject) => {
      const url = new URL(`${server.url}/admin/imports?organization=${tenant.slug}&kind=supporters`);
      const request = httpRequest(url, {
        method: "POST",
        headers: {
          "content-type": "text/csv",
          "content-length": String(50 * 1024 * 1024 + 1),
          origin: server.url,
          cookie: owner.cookie,
        },
      });
      request.on("response", (response) => {
        let text = "";
        response.on("data", (chunk) => {
          text += chunk;
        });
        response.on("end", () => {
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
          request.destroy();
        });
      });
      request.on("error", reject);
      request.write("Email\n");
    });
    expect(tooLarge).toMatchObject({
      status: 413,
      body: {
        code: "request_too_large",
        detail: "The file is larger than the 50 MB an import takes: split it into smaller files",
      },
    });

    // Signed out, or from another origin.
    expect((await post("/admin/imports", GIVEBUTTER, supporters, { cookie: "" })).status).toBe(401);
    expect(
      await problemOf(await post("/admin/imports", GIVEBUTTER, supporters, { origin: "https://evil.example" })),
    ).toMatchObject({ status: 403, body: { code: "cross_origin_refused" } });
    expect(await importCount(tenant.organizationId)).toBe(0);
    expect(await supporterCount(tenant.organizationId)).toBe(0);
  });

  it("is for owners and admins of the organization only: a member is refused, another organization sees none", async () => {
    const query = { kind: "supporters", preset: "givebutter", dry_run: "true" };
    expect(await problemOf(await post("/admin/imports", GIVEBUTTER, query, { cookie: member.cookie }))).toMatchObject({
      status: 403,
      body: { code: "insufficient_scope" },
    });
    expect(
      (await post("/admin/imports/preview", GIVEBUTTER, { kind: "supporters" }, { cookie: member.cookie })).status,
    ).toBe(403);
    expect(await problemOf(await post("/admin/imports", GIVEBUTTER, query, { cookie: outsider.cookie }))).toMatchObject(
      {
        status: 403,
        body: { code: "not_a_member" },
      },
    );
    expect(await importCount(tenant.organizationId)).toBe(0);

    const queued = await post("/admin/imports", GIVEBUTTER, { ...query, file_name: "contacts.csv" });
    expect(queued.status).toBe(202);
    const { id } = (await queued.json()) as Json;
    await runQueuedImports(server.database.db, { organizationIds: [tenant.organizationId] });

    const asMember = await graphql("{ imports { id } }", {}, member.cookie, tenant.slug);
    expect(asMember.errors?.[0]?.extensions?.code).toBe("insufficient_scope");
    expect((await importOf(id, member.cookie)).errors?.[0]?.extensions?.code).toBe("insufficient_scope");
    // The other organization's owner, in their own organization: no such import, no results.
    expect((await importOf(id, outsider.cookie, other.slug)).errors?.[0]?.extensions?.code).toBe("not_found");
    expect((await graphql("{ imports { id } }", {}, outsider.cookie, other.slug)).data).toEqual({ imports: [] });
    const results = (slug: string, cookie: string) =>
      fetch(`${server.url}/admin/imports/${id}/results.csv?organization=${slug}`, { headers: { cookie } });
    expect(await problemOf(await results(other.slug, outsider.cookie))).toMatchObject({
      status: 404,
      body: { code: "not_found" },
    });
    expect((await results(tenant.slug, outsider.cookie)).status).toBe(403);
    expect((await results(tenant.slug, member.cookie)).status).toBe(403);
    expect((await results(tenant.slug, owner.cookie)).status).toBe(200);
  });

  it("queues a dry run and then the import for the worker: progress, counts, refused rows, results as CSV", async () => {
    const org = await fakeTenant(server.database.db);
    const admin = await signedIn(org.slug, "admin");
    const upload = async (dryRun: boolean) => {
      const response = await post(
        "/admin/imports",
        GIVEBUTTER,
        { kind: "supporters", preset: "givebutter", dry_run: String(dryRun), file_name: "contacts.csv" },
        { cookie: admin.cookie, slug: org.slug },
      );
      expect(response.status).toBe(202);
      return (await response.json()) as Json;
    };

    const dry = await upload(true);
    expect(dry).toMatchObject({
      kind: "supporters",
      file_name: "contacts.csv",
      preset: "givebutter",
      mapping: null,
      dry_run: true,
      state: "queued",
      rows_total: 5,
      rows_done: 0,
      created_by: admin.id,
    });
    const resultsOf = (id: number) =>
      fetch(`${server.url}/admin/imports/${id}/results.csv?organization=${org.slug}`, {
        headers: { cookie: admin.cookie },
      });
    expect(await problemOf(await resultsOf(dry.id))).toMatchObject({
      status: 404,
      body: { detail: `Import ${dry.id} has no results yet (it is queued)` },
    });

    expect(await runQueuedImports(server.database.db, { organizationIds: [org.organizationId] })).toBe(1);
    const checked = (await importOf(dry.id, admin.cookie, org.slug)).data.import;
    expect(checked).toMatchObject({
      state: "done",
      dry_run: true,
      rows_total: 5,
      rows_done: 5,
      created: 3,
      updated: 0,
      unchanged: 0,
      refused: 2,
      error: null,
      results_url: `/admin/imports/${dry.id}/results.csv?organization=${org.slug}`,
    });
    expect(checked.refused_rows).toEqual([
      {
        line: 5,
        external_id: "GB-1004",
        problems: [
          { column: "Date of Birth", field: "date_of_birth", message: '"17/05/1990" is not a date (YYYY-MM-DD)' },
          {
            column: "Country",
            field: "country",
            message: '"Atlantis" is not a country (a name or an ISO code such as IT)',
          },
          {
            column: "Email Subscription Status",
            field: "email_marketing",
            message: '"maybe" is not a yes or no (yes, no, true, false, subscribed, unsubscribed)',
          },
        ],
      },
      {
        line: 6,
        external_id: "GB-1001",
        problems: [{ column: "external_id", field: "external_id", message: "the same external id as line 2" }],
      },
    ]);
    expect(await supporterCount(org.organizationId)).toBe(0);

    const real = await upload(false);
    expect(await runQueuedImports(server.database.db, { organizationIds: [org.organizationId] })).toBe(1);
    expect((await importOf(real.id, admin.cookie, org.slug)).data.import).toMatchObject({
      state: "done",
      dry_run: false,
      rows_done: 5,
      created: 3,
      refused: 2,
    });
    expect(await supporterCount(org.organizationId)).toBe(3);
    // The run's changes are the member's, as if they had made them in the panel.
    const audit = await auditRowsOf(server.database.db, org.organizationId, [
      "supporter.created",
      "supporters.imported",
    ]);
    expect(audit.map((row) => row.type)).toEqual([
      "supporter.created",
      "supporter.created",
      "supporter.created",
      "supporters.imported",
    ]);
    expect(audit[3]?.actor).toMatchObject({ type: "user", user_id: admin.id });
    // The file is let go once the run is over.
    const [stored] = await server.database.db
      .select({ content: imports.content, csv: imports.resultsCsv })
      .from(imports)
      .where(and(eq(imports.organizationId, org.organizationId), eq(imports.id, real.id)));
    expect(stored?.content).toBeNull();
    expect(stored?.csv).toBeTruthy();

    const response = await resultsOf(real.id);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="contacts-import-${real.id}-results.csv"`,
    );
    const lines = (await response.text()).trim().split("\r\n");
    expect(lines[0]).toBe("line,external_id,outcome,supporter_id,problems");
    expect(lines.slice(1).map((line) => line.split(",").slice(0, 3).join(","))).toEqual([
      "2,GB-1001,created",
      "3,GB-1002,created",
      "4,GB-1003,created",
      "5,GB-1004,refused",
      "6,GB-1001,refused",
    ]);

    const listed = await graphql("{ imports(first: 5) { id dry_run state } }", {}, admin.cookie, org.slug);
    expect(listed.data.imports).toEqual([
      { id: real.id, dry_run: false, state: "done" },
      { id: dry.id, dry_run: true, state: "done" },
    ]);
    expect(
      (await graphql("{ imports(first: 0) { id } }", {}, admin.cookie, org.slug)).errors?.[0]?.extensions?.code,
    ).toBe("invalid_request");
  });

  it("imports gift history the same way: the worker runs the gift importer, its results have the donation and payment", async () => {
    const org = await fakeTenant(server.database.db);
    const admin = await signedIn(org.slug, "admin");
    await fakeCampaign(server.database.db, org.organizationId, { title: "Spring Appeal" });
    await fakeCampaign(server.database.db, org.organizationId, { title: "Monthly Friends" });
    const response = await post(
      "/admin/imports",
      GIFTS,
      { kind: "donations", preset: "givebutter", dry_run: "false", file_name: "transactions.csv" },
      { cookie: admin.cookie, slug: org.slug },
    );
    expect(response.status).toBe(202);
    const queued = (await response.json()) as Json;
    expect(queued).toMatchObject({ kind: "donations", rows_total: 11, state: "queued" });
    expect(await runQueuedImports(server.database.db, { organizationIds: [org.organizationId] })).toBe(1);
    expect((await importOf(queued.id, admin.cookie, org.slug)).data.import).toMatchObject({
      state: "done",
      rows_done: 11,
      created: 6,
      refused: 5,
    });
    const csv = await fetch(`${server.url}/admin/imports/${queued.id}/results.csv?organization=${org.slug}`, {
      headers: { cookie: admin.cookie },
    });
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe("line,external_id,outcome,supporter_id,donation_id,payment_id,problems");
    expect(lines[1]).toMatch(/^2,T-1,created,\d+,\d+,\d+,$/);
    // Gifts need donations:write: a member is refused before anything is stored.
    const memberOfOrg = await signedIn(org.slug, "member");
    const refused = await post(
      "/admin/imports",
      GIFTS,
      { kind: "donations", preset: "givebutter" },
      { cookie: memberOfOrg.cookie, slug: org.slug },
    );
    expect(refused.status).toBe(403);
  });

  it("the worker: an import left running by a stopped worker is failed; stopping ends the one under way after its batch", async () => {
    const org = await fakeTenant(server.database.db);
    const admin = await signedIn(org.slug, "owner");
    const upload = async (content: string) => {
      const response = await post(
        "/admin/imports",
        content,
        { kind: "supporters", file_name: "people.csv" },
        { cookie: admin.cookie, slug: org.slug },
      );
      expect(response.status).toBe(202);
      return ((await response.json()) as Json).id as number;
    };
    const stateOf = async (id: number) =>
      (
        await server.database.db
          .select({ state: imports.state, rowsDone: imports.rowsDone, error: imports.error, content: imports.content })
          .from(imports)
          .where(and(eq(imports.organizationId, org.organizationId), eq(imports.id, id)))
      )[0];

    const stalled = await upload("email\nstalled@example.org\n");
    await server.database.db
      .update(imports)
      .set({ state: "running", updateDate: sql`now() - interval '11 minutes'` })
      .where(and(eq(imports.organizationId, org.organizationId), eq(imports.id, stalled)));
    await runQueuedImports(server.database.db, { organizationIds: [org.organizationId] });
    expect(await stateOf(stalled)).toMatchObject({
      state: "failed",
      content: null,
      error:
        "The import stopped before its end (its worker was stopped). The rows of the batches before it were imported; importing the file again changes nothing for them.",
    });

    // 1,200 rows: three batches; the worker is stopped while the first is written.
    const many = await upload(
      `email,first_name\n${Array.from({ length: 1200 }, (_, index) => `p${index}@example.org,P${index}`).join("\n")}\n`,
    );
    let asked = 0;
    const stopping = {
      get aborted() {
        asked += 1;
        return asked > 1;
      },
    } as AbortSignal;
    expect(
      await runQueuedImports(server.database.db, { signal: stopping, organizationIds: [org.organizationId] }),
    ).toBe(1);
    const stopped = await stateOf(many);
    expect(stopped).toMatchObject({
      state: "failed",
      rowsDone: 500,
      content: null,
      error:
        "The import stopped before its end (the server was stopped). The rows of the batches before it were imported; importing the file again changes nothing for them.",
    });
    expect(await supporterCount(org.organizationId)).toBe(500);

    // The runner as the server starts it: a queued file is run within its interval; stopping it waits for the pass.
    const queued = await upload("email\nqueued@example.org\n");
    const runner = startImportRunner(server.database.db, {
      intervalSeconds: 0.1,
      organizationIds: [org.organizationId],
      onError: () => {},
    });
    await expect.poll(async () => (await stateOf(queued))?.state, { timeout: 30_000 }).toBe("done");
    await runner.stop();
    expect(await supporterCount(org.organizationId)).toBe(501);
  });
});
