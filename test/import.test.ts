import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, Db } from "../src/db/client.js";
import { consentRecords, events, supporters } from "../src/db/schema.js";
import { AppError } from "../src/errors/app-error.js";
import { importResultsCsv, importSupporters } from "../src/modules/imports/supporter-import.service.js";
import { runCliInProcess, runCli as runDonataCli } from "./helpers/cli.js";
import { openTestDatabase, testDatabaseUrl } from "./helpers/database.js";
import { fakeSupporter, fakeTenant, unique } from "./helpers/factories.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/import/${name}`, import.meta.url));
const GIVEBUTTER = fixture("givebutter-contacts.csv");
const DONORBOX = fixture("donorbox-donors.csv");

const rowsOf = (db: Db, organizationId: number) =>
  db.select().from(supporters).where(eq(supporters.organizationId, organizationId)).orderBy(asc(supporters.id));
const consentsOf = async (db: Db, organizationId: number) =>
  (
    await db
      .select()
      .from(consentRecords)
      .where(eq(consentRecords.organizationId, organizationId))
      .orderBy(asc(consentRecords.id))
  ).map((row) => [row.supporterId, row.source, row.consents, row.applied, row.donationId]);
const eventsOf = (db: Db, organizationId: number) =>
  db.select().from(events).where(eq(events.organizationId, organizationId)).orderBy(asc(events.seq));

describe("importing supporters from a file", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it("a Givebutter contacts export: the dry run says every row's outcome and writes nothing; the import; the same file again changes nothing", async () => {
    const { db } = database;
    const org = await fakeTenant(db);
    const request = {
      organizationId: org.organizationId,
      fileName: "contacts.csv",
      content: GIVEBUTTER,
      preset: "givebutter" as const,
    };
    const eventsBefore = (await eventsOf(db, org.organizationId)).length;

    const dry = await importSupporters(db, { ...request, dryRun: true });
    expect(dry).toMatchObject({
      kind: "supporters",
      preset: "givebutter",
      dry_run: true,
      rows: 5,
      created: 3,
      updated: 0,
      unchanged: 0,
      refused: 2,
    });
    expect(dry.columns.mapping).toMatchObject({
      external_id: "Givebutter Contact ID",
      email: "Primary Email",
      postal_code: "Postal Code",
      email_marketing: "Email Subscription Status",
      business_name: "Company",
    });
    expect(dry.columns.ignored).toContain("Total Contributions");
    expect(dry.results.map((row) => [row.line, row.external_id, row.outcome, row.supporter_id])).toEqual([
      [2, "GB-1001", "created", null],
      [3, "GB-1002", "created", null],
      [4, "GB-1003", "created", null],
      [5, "GB-1004", "refused", null],
      [6, "GB-1001", "refused", null],
    ]);
    // Each problem of a row, by the file's own column name.
    expect(dry.results[3]?.problems).toEqual([
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
    ]);
    expect(dry.results[4]?.problems).toEqual([
      { column: "external_id", field: "external_id", message: "the same external id as line 2" },
    ]);
    expect(await rowsOf(db, org.organizationId)).toEqual([]);
    expect(await eventsOf(db, org.organizationId)).toHaveLength(eventsBefore);
    expect(await consentsOf(db, org.organizationId)).toEqual([]);

    const done = await importSupporters(db, { ...request, dryRun: false });
    expect(done).toMatchObject({ dry_run: false, rows: 5, created: 3, updated: 0, unchanged: 0, refused: 2 });
    const rows = await rowsOf(db, org.organizationId);
    expect(rows.map((row) => row.id)).toEqual(done.results.slice(0, 3).map((row) => row.supporter_id));
    expect(rows[0]).toMatchObject({
      externalId: "GB-1001",
      firstName: "Maria",
      lastName: "Rossi",
      email: "maria.rossi@example.org",
      phone: "+39 333 111 2222",
      job: "Teacher",
      sex: "FEMALE",
      dateOfBirth: "1980-05-17",
      address: "Via Roma 1",
      address2: "Scala B",
      city: "Milano",
      locality: "MI",
      postalCode: "20121",
      country: "IT",
      emailMarketing: true,
      tags: ["monthly", "school"],
      note: "Met at the spring fair",
    });
    expect(rows[1]).toMatchObject({
      externalId: "GB-1002",
      email: "LUCA.BIANCHI@Example.org",
      country: "IT",
      emailMarketing: false,
    });
    expect(rows[2]).toMatchObject({ externalId: "GB-1003", businessName: "Fondazione Aurora", email: null });
    // What the file said of each person's consents is kept, as said and where it came from.
    const consents = [
      [rows[0]?.id, "import", { email_marketing: true }, true, null],
      [rows[1]?.id, "import", { email_marketing: false }, true, null],
    ];
    expect(await consentsOf(db, org.organizationId)).toEqual(consents);
    const written = (await eventsOf(db, org.organizationId)).slice(eventsBefore);
    expect(written.map((event) => event.type)).toEqual([
      "supporter.created",
      "supporter.created",
      "supporter.created",
      "supporters.imported",
    ]);
    expect(written[3]?.data).toEqual({
      file: "contacts.csv",
      preset: "givebutter",
      rows: 5,
      created: 3,
      updated: 0,
      unchanged: 0,
      refused: 2,
    });

    const again = await importSupporters(db, { ...request, dryRun: false });
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 3, refused: 2 });
    expect(await rowsOf(db, org.organizationId)).toEqual(rows);
    expect(await consentsOf(db, org.organizationId)).toEqual(consents);
    expect((await eventsOf(db, org.organizationId)).slice(eventsBefore + 4).map((event) => event.type)).toEqual([
      "supporters.imported",
    ]);

    const csv = importResultsCsv(done);
    expect(csv.split("\r\n").slice(0, 2)).toEqual([
      "line,external_id,outcome,supporter_id,problems",
      `2,GB-1001,created,${rows[0]?.id},`,
    ]);
    expect(csv).toContain('5,GB-1004,refused,,"Date of Birth: ""17/05/1990"" is not a date (YYYY-MM-DD); Country:');
  });

  it("a corrected file changes only what changed; a supporter already here is matched by email, gets the external id, and keeps their tags", async () => {
    const { db } = database;
    const org = await fakeTenant(db);
    const known = await fakeSupporter(db, org.organizationId, {
      email: "Anna.Neri@example.org",
      firstName: "Anna",
      lastName: null,
      tags: ["volunteer"],
      note: "Written in Donata",
      emailMarketing: null,
    });
    const request = {
      organizationId: org.organizationId,
      fileName: "donors.csv",
      preset: "donorbox" as const,
      dryRun: false,
    };
    const first = await importSupporters(db, { ...request, content: DONORBOX });
    expect(first).toMatchObject({ rows: 3, created: 2, updated: 1, unchanged: 0, refused: 0 });
    expect(first.results[0]).toMatchObject({ outcome: "updated", supporter_id: known.id, external_id: "DB-77" });
    const [anna] = await db
      .select()
      .from(supporters)
      .where(and(eq(supporters.organizationId, org.organizationId), eq(supporters.id, known.id)));
    expect(anna).toMatchObject({
      externalId: "DB-77",
      email: "Anna.Neri@example.org",
      lastName: "Neri",
      city: "Roma",
      country: "IT",
      emailMarketing: true,
      note: "Written in Donata",
      tags: ["volunteer"],
    });
    const imported = await consentsOf(db, org.organizationId);
    // Anna's consent changed (she had said nothing here): recorded with the import's source.
    expect(imported).toContainEqual([known.id, "import", { email_marketing: true }, true, null]);
    const acme = (await rowsOf(db, org.organizationId)).find((row) => row.externalId === "DB-79");
    expect(acme).toMatchObject({ businessName: "Acme Inc.", country: "US", email: "info@acme.example.org" });

    // Paolo moved: the corrected file changes his city, and nothing else anywhere.
    const before = await rowsOf(db, org.organizationId);
    const corrected = DONORBOX.toString("utf8").replace("Napoli,NA,80100", "Bari,BA,70121");
    const second = await importSupporters(db, { ...request, content: corrected });
    expect(second).toMatchObject({ created: 0, updated: 1, unchanged: 2, refused: 0 });
    const after = await rowsOf(db, org.organizationId);
    const changed = after.filter((row, index) => JSON.stringify(row) !== JSON.stringify(before[index]));
    expect(changed.map((row) => [row.externalId, row.city, row.locality, row.postalCode])).toEqual([
      ["DB-78", "Bari", "BA", "70121"],
    ]);
    const [updated] = (await eventsOf(db, org.organizationId))
      .filter((event) => event.type === "supporter.updated")
      .slice(-1);
    expect(updated?.changes).toMatchObject({ city: { before: "Napoli", after: "Bari" } });
    // A move is no consent: nothing more recorded.
    expect(await consentsOf(db, org.organizationId)).toEqual(imported);
  });

  it("never matches another organization's supporter, by email or external id", async () => {
    const { db } = database;
    const other = await fakeTenant(db);
    await importSupporters(db, {
      organizationId: other.organizationId,
      fileName: "d.csv",
      content: DONORBOX,
      preset: "donorbox",
      dryRun: false,
    });
    const org = await fakeTenant(db);
    const otherRows = await rowsOf(db, other.organizationId);
    const result = await importSupporters(db, {
      organizationId: org.organizationId,
      fileName: "d.csv",
      content: DONORBOX,
      preset: "donorbox",
      dryRun: false,
    });
    expect(result).toMatchObject({ created: 3, updated: 0, unchanged: 0 });
    expect(await rowsOf(db, other.organizationId)).toEqual(otherRows);
  });

  it("reads any file with a mapping (semicolons, Italian headers), and refuses a file it cannot read as a whole, writing nothing", async () => {
    const { db } = database;
    const org = await fakeTenant(db);
    const italian =
      "\uFEFFCodice;Nome;Cognome;Posta elettronica;Paese;Newsletter\nA1;Chiara;Fontana;chiara@example.org;Italia;sì\nA2;Marco;;marco@example.org;Francia;no\n";
    const mapped = await importSupporters(db, {
      organizationId: org.organizationId,
      fileName: "export.csv",
      content: italian,
      mapping: {
        Codice: "external_id",
        Nome: "first_name",
        Cognome: "last_name",
        "Posta elettronica": "email",
        Paese: "country",
        Newsletter: "email_marketing",
      },
      dryRun: false,
    });
    expect(mapped).toMatchObject({ created: 2, refused: 0 });
    expect(
      (await rowsOf(db, org.organizationId)).map((row) => [
        row.externalId,
        row.firstName,
        row.country,
        row.emailMarketing,
      ]),
    ).toEqual([
      ["A1", "Chiara", "IT", true],
      ["A2", "Marco", "FR", false],
    ]);

    const refusal = async (
      content: string | Buffer,
      options: { preset?: "givebutter"; mapping?: Record<string, string> } = {},
    ) => {
      const error = await importSupporters(db, {
        organizationId: org.organizationId,
        fileName: "x.csv",
        content,
        dryRun: false,
        ...options,
      }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
      return (error as AppError).message;
    };
    const rowsBefore = await rowsOf(db, org.organizationId);
    expect(await refusal("")).toBe("The file cannot be imported: it has no header line");
    expect(await refusal("Amount,Date\n5,2024-01-01\n")).toBe(
      "The file cannot be imported: no column names a supporter's email, name, business name or external id: give a mapping",
    );
    expect(await refusal("Amount,Date\n5,2024-01-01\n", { preset: "givebutter" })).toBe(
      "The file cannot be imported: no column of the file is one of givebutter's export columns (found: Amount, Date)",
    );
    expect(await refusal("Email\na@example.org\n", { mapping: { Mail: "email" } })).toBe(
      'The file cannot be imported: the mapping names the column "Mail", which the file does not have',
    );
    expect(await refusal("Email\na@example.org\n", { mapping: { Email: "favourite_colour" } })).toMatch(
      /^The file cannot be imported: the mapping's field "favourite_colour" \(column "Email"\) is not one of: external_id, business_name, first_name, last_name, email/,
    );
    expect(await refusal(Buffer.from([0x45, 0x6d, 0x61, 0x69, 0x6c, 0x0a, 0xff, 0xfe, 0x0a]))).toBe(
      "The file cannot be imported: it is not UTF-8 text (save it as CSV UTF-8)",
    );
    expect(await refusal('Email\n"unclosed@example.org\n')).toMatch(/^The file cannot be imported: Quote Not Closed/);
    expect(await rowsOf(db, org.organizationId)).toEqual(rowsBefore);
  });
});

describe("donata import", () => {
  const children = new Set<ChildProcess>();
  let scratch = "";
  let slug = "";
  const target = (): Record<string, string> => {
    const url = testDatabaseUrl();
    return url ? { DATABASE_URL: url } : { DATA_DIR: path.join(scratch, "data") };
  };
  // In this process, but one run as a user starts it (`node bin/donata.js`).
  const runCli = (...args: string[]) => runCliInProcess(args, { LOG_LEVEL: "warn", ...target() });
  const spawnCli = (...args: string[]) => runDonataCli(args, target(), { children });

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), "donata-import-"));
    slug = `imp-${unique(8)}`;
    if (!testDatabaseUrl()) expect((await runCli("migrate")).code).toBe(0);
    const created = await runCli("org", "create", "--slug", slug, "--name", "Import Trust", "--json");
    expect(created.code, created.stderr).toBe(0);
    await writeFile(path.join(scratch, "contacts.csv"), GIVEBUTTER);
  }, 180_000);
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await rm(scratch, { recursive: true, force: true });
  });

  it("checks a file with --dry-run, imports it with the results file, and refuses bad arguments with a usage error", async () => {
    const file = path.join(scratch, "contacts.csv");
    const dry = await spawnCli(
      "import",
      "--org",
      slug,
      "--kind",
      "supporters",
      "--file",
      file,
      "--preset",
      "givebutter",
      "--dry-run",
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      "Dry run (nothing written): contacts.csv for " +
        slug +
        ", 5 rows: 3 to create, 0 to update, 0 unchanged, 2 refused",
    );
    expect(dry.stdout).toContain('email ← "Primary Email"');
    expect(dry.stdout).toContain("  line 6: external_id: the same external id as line 2");

    const results = path.join(scratch, "results.csv");
    const done = await runCli(
      "import",
      "--org",
      slug,
      "--kind",
      "supporters",
      "--file",
      file,
      "--preset",
      "givebutter",
      "--results",
      results,
      "--json",
    );
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      organization: slug,
      dry_run: false,
      rows: 5,
      created: 3,
      refused: 2,
      refused_rows: [{ line: 5 }, { line: 6 }],
    });
    const lines = (await readFile(results, "utf8")).trim().split("\r\n");
    expect(lines).toHaveLength(6);
    expect(lines[1]).toMatch(/^2,GB-1001,created,\d+,$/);

    const again = await runCli(
      "import",
      "--org",
      slug,
      "--kind",
      "supporters",
      "--file",
      file,
      "--preset",
      "givebutter",
      "--json",
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, unchanged: 3, refused: 2 });

    const usage = [
      await runCli("import", "--org", slug, "--kind", "gifts", "--file", file),
      await runCli("import", "--org", slug, "--kind", "supporters", "--file", file, "--preset", "classy"),
      await runCli("import", "--org", slug, "--kind", "supporters", "--file", path.join(scratch, "missing.csv")),
      await runCli("import", "--org", slug, "--kind", "supporters", "--file", file, "--map", "nofield"),
      await runCli("import", "--org", slug, "--kind", "supporters", "--file", file, "--campaign", "spring"),
    ];
    expect(usage.map((run) => run.code)).toEqual([2, 2, 2, 2, 2]);
    expect(usage[0]?.stderr).toContain('--kind must be supporters or donations, not "gifts"');
    expect(usage[4]?.stderr).toContain("--campaign is for --kind donations");
    expect(usage[1]?.stderr).toContain('--preset must be one of givebutter, donorbox, not "classy"');
    expect(usage[2]?.stderr).toContain("--file: cannot read");
    expect(usage[3]?.stderr).toContain('--map takes "Column=field"');
  }, 240_000);
});
