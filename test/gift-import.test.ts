import { readFileSync } from "node:fs";
import { and, asc, count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, Db } from "../src/db/client.js";
import {
  campaigns,
  donations,
  events,
  outboxMessages,
  paymentMethods,
  payments,
  receipts,
  supporters,
} from "../src/db/schema.js";
import { AppError } from "../src/errors/app-error.js";
import { giftImportResultsCsv, importGifts } from "../src/modules/imports/gift-import.service.js";
import { parseAmount, parseDate } from "../src/modules/imports/gift-rows.js";
import { openTestDatabase } from "./helpers/database.js";
import { fakeCampaign, fakeSupporter, fakeTenant } from "./helpers/factories.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/import/${name}`, import.meta.url));
const GIVEBUTTER = fixture("givebutter-transactions.csv");
const DONORBOX = fixture("donorbox-donations.csv");
const NOW = new Date("2026-11-27T12:00:00Z");

/** How many rows each table holds for the organization: what a dry run must leave as it was. */
async function tally(db: Db, organizationId: number) {
  const counted = async (table: typeof donations | typeof payments | typeof supporters | typeof campaigns) =>
    Number((await db.select({ n: count() }).from(table).where(eq(table.organizationId, organizationId)))[0]?.n);
  return {
    supporters: await counted(supporters),
    campaigns: await counted(campaigns),
    donations: await counted(donations),
    payments: await counted(payments),
    events: Number(
      (await db.select({ n: count() }).from(events).where(eq(events.organizationId, organizationId)))[0]?.n,
    ),
  };
}

const eventTypes = async (db: Db, organizationId: number, after: number) =>
  (await db.select().from(events).where(eq(events.organizationId, organizationId)).orderBy(asc(events.seq)))
    .slice(after)
    .map((event) => event.type);

describe("importing gift history from a file", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it("reads amounts and dates as exports write them", () => {
    expect(parseAmount("1,234.50", "EUR")).toEqual({ value: 1234.5 });
    expect(parseAmount("1.234,50", "EUR")).toEqual({ value: 1234.5 });
    expect(parseAmount("€ 30", "EUR")).toEqual({ value: 30 });
    expect(parseAmount("40,00", "EUR")).toEqual({ value: 40 });
    expect(parseAmount("1,234", "EUR")).toEqual({ value: 1234 });
    expect(parseAmount("30.00 EUR", "EUR")).toEqual({ value: 30 });
    expect(parseAmount("1500", "JPY")).toEqual({ value: 1500 });
    expect(parseAmount("15.5", "JPY")).toHaveProperty("problem");
    expect(parseAmount("10.005", "EUR")).toEqual({ value: 10005 });
    expect(parseAmount("-5", "EUR")).toHaveProperty("problem");
    expect(parseAmount("0", "EUR")).toHaveProperty("problem");
    expect(parseAmount("abc", "EUR")).toHaveProperty("problem");
    expect(parseDate("2025-01-15")).toEqual({ value: new Date("2025-01-15T12:00:00Z") });
    expect(parseDate("2025-01-15 10:00:00")).toEqual({ value: new Date("2025-01-15T10:00:00Z") });
    expect(parseDate("2024-11-02 08:00:00 +0100")).toEqual({ value: new Date("2024-11-02T07:00:00Z") });
    expect(parseDate("2025-05-10T09:30:00+02:00")).toEqual({ value: new Date("2025-05-10T07:30:00Z") });
    expect(parseDate("2025-02-30")).toHaveProperty("problem");
    expect(parseDate("15/01/2025")).toHaveProperty("problem");
  });

  it("a Givebutter transactions export: the dry run writes nothing; the import makes donations and payments, with no receipt and no email; the same file again changes nothing", async () => {
    const { db } = database;
    const org = await fakeTenant(db);
    const spring = await fakeCampaign(db, org.organizationId, { title: "Spring Appeal", slug: "spring" });
    const friends = await fakeCampaign(db, org.organizationId, { title: "Monthly Friends", slug: "friends" });
    // Luca is here already (his address in another case): his gifts are his.
    const luca = await fakeSupporter(db, org.organizationId, {
      email: "luca.bianchi@example.org",
      firstName: "Luca",
      lastName: "Bianchi",
      externalId: null,
    });
    const request = {
      organizationId: org.organizationId,
      fileName: "transactions.csv",
      content: GIVEBUTTER,
      preset: "givebutter" as const,
      now: NOW,
    };
    const before = await tally(db, org.organizationId);

    const dry = await importGifts(db, { ...request, dryRun: true });
    expect(await tally(db, org.organizationId)).toEqual(before);
    expect(dry).toMatchObject({
      kind: "donations",
      dry_run: true,
      rows: 11,
      created: 6,
      updated: 0,
      unchanged: 0,
      refused: 5,
      campaigns_created: ["Winter Gala"],
      recurring_awaiting: 1,
    });
    expect(dry.columns.mapping).toMatchObject({
      external_id: "Transaction ID",
      amount: "Amount",
      date: "Transaction Date",
      campaign: "Campaign Title",
      recurring_id: "Plan ID",
      supporter_external_id: "Contact ID",
      tribute_type: "Dedication Type",
    });
    expect(dry.columns.ignored).toEqual(expect.arrayContaining(["Fee", "Fee Covered", "Campaign Code"]));
    const refusedOf = (result: typeof dry) =>
      result.results
        .filter((row) => row.outcome === "refused")
        .map((row) => [row.line, row.problems.map((problem) => `${problem.column}: ${problem.message}`)]);
    expect(refusedOf(dry)).toEqual([
      [7, ['Amount: "abc" is not an amount']],
      [8, ['Transaction Date: "2099-01-01" is in the future']],
      [9, ["Transaction ID: the same id as line 2"]],
      [11, ['Currency: "USD" is not the organization\'s currency (EUR)']],
      [12, ['Status: "failed": only gifts received are imported (paid, refunded)']],
    ]);
    // Ids of what a dry run would make are not given; a supporter found is.
    expect(dry.results.find((row) => row.external_id === "T-2")).toMatchObject({
      outcome: "created",
      supporter_id: luca.id,
      donation_id: null,
      payment_id: null,
    });

    const seqBefore = (await eventTypes(db, org.organizationId, 0)).length;
    const done = await importGifts(db, { ...request, dryRun: false });
    expect(done).toMatchObject({ dry_run: false, rows: 11, created: 6, refused: 5, recurring_awaiting: 1 });
    expect(done.campaigns_created).toEqual(["Winter Gala"]);
    const after = await tally(db, org.organizationId);
    // Maria and Sara are new (Luca was here); Winter Gala is new; T-1, T-5, T-8 and Luca's plan.
    expect(after).toMatchObject({
      supporters: before.supporters + 2,
      campaigns: before.campaigns + 1,
      donations: before.donations + 4,
      payments: before.payments + 6,
    });

    const byExternalId = async (externalId: string) => {
      const [payment] = await db
        .select()
        .from(payments)
        .where(and(eq(payments.organizationId, org.organizationId), eq(payments.externalId, externalId)));
      if (!payment) throw new Error(`no payment ${externalId}`);
      const [donation] = await db
        .select()
        .from(donations)
        .where(and(eq(donations.organizationId, org.organizationId), eq(donations.id, payment.donationId)));
      const [method] = await db
        .select()
        .from(paymentMethods)
        .where(
          and(
            eq(paymentMethods.organizationId, org.organizationId),
            eq(paymentMethods.id, payment.paymentMethodId ?? -1),
          ),
        );
      return { payment, donation, method };
    };

    // A one-off gift: done, paid on its date, its label, its note, the donor made with their id there.
    const t1 = await byExternalId("T-1");
    expect(t1.payment).toMatchObject({ state: "PAID", amount: 50, currency: "EUR", amountRefunded: 0 });
    expect(t1.payment.paymentDate?.toISOString()).toBe("2025-01-15T10:00:00.000Z");
    expect(t1.donation).toMatchObject({
      state: "done",
      frequency: 0,
      campaignId: spring.id,
      note: "For the library",
      externalId: null,
      activation: null,
    });
    expect(t1.method).toMatchObject({ processor: "manual", label: "card" });
    const [maria] = await db
      .select()
      .from(supporters)
      .where(and(eq(supporters.organizationId, org.organizationId), eq(supporters.externalId, "GB-1001")));
    expect(maria).toMatchObject({ firstName: "Maria", lastName: "Rossi", email: "maria.rossi@example.org" });
    expect(t1.donation?.supporterId).toBe(maria?.id);

    // Luca's monthly plan: one donation, three payments (one refunded), charging nobody until turned on.
    const t2 = await byExternalId("T-2");
    const t4 = await byExternalId("T-4");
    expect(t4.donation?.id).toBe(t2.donation?.id);
    expect(t2.donation).toMatchObject({
      supporterId: luca.id,
      campaignId: friends.id,
      state: "pending",
      frequency: 12,
      amount: 10,
      externalId: "P-9",
      activation: "awaiting",
    });
    expect(t2.donation?.nextChargeDate?.toISOString()).toBe("2025-05-01T12:00:00.000Z");
    expect(t2.method).toMatchObject({ processor: "stripe", label: "card" });
    expect(t2.method?.processorReference).toBe("cus_luca/pm_card_visa");
    expect(t4.payment).toMatchObject({ state: "REFUNDED", amountRefunded: 10 });

    // A tribute; an amount written with a thousands separator; a time with its offset.
    const t5 = await byExternalId("T-5");
    expect(t5.payment.amount).toBe(1234.5);
    expect(t5.payment.paymentDate?.toISOString()).toBe("2025-05-10T07:30:00.000Z");
    expect(t5.donation).toMatchObject({ tributeType: "memory", tributeName: "Nonna Rosa" });

    // The campaign the file named and the organization lacked: a draft, with the gift in it.
    const t8 = await byExternalId("T-8");
    const [gala] = await db
      .select()
      .from(campaigns)
      .where(and(eq(campaigns.organizationId, org.organizationId), eq(campaigns.id, t8.donation?.campaignId ?? -1)));
    expect(gala).toMatchObject({ title: "Winter Gala", status: "draft", slug: "winter-gala" });

    // Told as created, never as paid: no receipt, no email.
    const types = await eventTypes(db, org.organizationId, seqBefore);
    expect(types.filter((type) => type === "payment.created")).toHaveLength(6);
    expect(types.filter((type) => type === "donation.created")).toHaveLength(4);
    expect(types.filter((type) => type === "supporter.created")).toHaveLength(2);
    expect(types.filter((type) => type === "campaign.created")).toHaveLength(1);
    expect(types).not.toContain("payment.paid");
    expect(types.at(-1)).toBe("donations.imported");
    expect(
      await db.select({ id: receipts.id }).from(receipts).where(eq(receipts.organizationId, org.organizationId)),
    ).toEqual([]);
    expect(
      await db
        .select({ id: outboxMessages.id })
        .from(outboxMessages)
        .where(eq(outboxMessages.organizationId, org.organizationId)),
    ).toEqual([]);

    // The results file: every row, its outcome and records.
    const csv = giftImportResultsCsv(done).split("\r\n");
    expect(csv[0]).toBe("line,external_id,outcome,supporter_id,donation_id,payment_id,problems");
    expect(csv[1]).toBe(`2,T-1,created,${maria?.id},${t1.donation?.id},${t1.payment.id},`);
    expect(csv[6]).toBe('7,T-6,refused,,,,"Amount: ""abc"" is not an amount"');

    // The same file again: nothing new, nothing changed.
    const again = await importGifts(db, { ...request, dryRun: false });
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 6, refused: 5, campaigns_created: [] });
    expect(await tally(db, org.organizationId)).toEqual({ ...after, events: after.events + 1 });

    // A corrected file: T-1 refunded since, T-3 written with another amount.
    const corrected = GIVEBUTTER.toString("utf8")
      .replace("For the library", "")
      .replace(/^T-1,(.*),card,succeeded,One Time,/m, "T-1,$1,card,refunded,One Time,")
      .replace(/^(T-3,2025-03-01,.*?),10\.00,/m, "$1,12.00,");
    const fixed = await importGifts(db, { ...request, content: corrected, dryRun: false });
    expect(fixed).toMatchObject({ created: 0, updated: 1, unchanged: 4, refused: 6 });
    expect(fixed.results.find((row) => row.external_id === "T-1")?.outcome).toBe("updated");
    expect(fixed.results.find((row) => row.external_id === "T-3")?.problems).toEqual([
      {
        column: "amount",
        field: "amount",
        message: `imported before (payment ${(await byExternalId("T-3")).payment.id}) with another amount`,
      },
    ]);
    expect((await byExternalId("T-1")).payment).toMatchObject({ state: "REFUNDED", amountRefunded: 50 });
    expect((await eventTypes(db, org.organizationId, 0)).slice(-2)).toEqual(["payment.refunded", "donations.imported"]);
  });

  it("a Donorbox donations export: a monthly gift without a plan id is grouped by donor, campaign and amount", async () => {
    const { db } = database;
    const org = await fakeTenant(db);
    const scuole = await fakeCampaign(db, org.organizationId, { title: "Scuole" });
    const done = await importGifts(db, {
      organizationId: org.organizationId,
      fileName: "donations.csv",
      content: DONORBOX,
      preset: "donorbox",
      dryRun: false,
      now: NOW,
    });
    expect(done).toMatchObject({ rows: 4, created: 4, refused: 0, campaigns_created: [], recurring_awaiting: 0 });
    const rows = await db
      .select()
      .from(donations)
      .where(eq(donations.organizationId, org.organizationId))
      .orderBy(asc(donations.id));
    expect(rows.map((row) => [row.frequency, row.state, row.amount, row.campaignId, row.activation])).toEqual([
      [12, "revoked", 40, scuole.id, null],
      [0, "done", 500, scuole.id, null],
    ]);
    const [acme] = await db
      .select()
      .from(supporters)
      .where(and(eq(supporters.organizationId, org.organizationId), eq(supporters.externalId, "DB-79")));
    expect(acme).toMatchObject({ businessName: "Acme Inc.", email: "info@acme.example.org" });
    expect(rows[1]?.note).toBe("Keep up the good work");
  });

  it("never matches another organization's donor or payment, and refuses a file it cannot read as a whole, writing nothing", async () => {
    const { db } = database;
    const other = await fakeTenant(db);
    await fakeCampaign(db, other.organizationId, { title: "Spring Appeal" });
    await fakeCampaign(db, other.organizationId, { title: "Monthly Friends" });
    const foreign = await fakeSupporter(db, other.organizationId, { email: "maria.rossi@example.org" });
    await importGifts(db, {
      organizationId: other.organizationId,
      fileName: "t.csv",
      content: GIVEBUTTER,
      preset: "givebutter",
      dryRun: false,
      now: NOW,
    });
    const org = await fakeTenant(db);
    await fakeCampaign(db, org.organizationId, { title: "Spring Appeal" });
    await fakeCampaign(db, org.organizationId, { title: "Monthly Friends" });
    const done = await importGifts(db, {
      organizationId: org.organizationId,
      fileName: "t.csv",
      content: GIVEBUTTER,
      preset: "givebutter",
      dryRun: false,
      now: NOW,
    });
    // The other organization's payments with the same ids are not these.
    expect(done).toMatchObject({ created: 6, unchanged: 0 });
    expect(done.results.find((row) => row.external_id === "T-1")?.supporter_id).not.toBe(foreign.id);

    const before = await tally(db, org.organizationId);
    const refusals = [
      // No campaign named, and none given.
      importGifts(db, {
        organizationId: org.organizationId,
        fileName: "x.csv",
        content: "Transaction ID,Amount,Date,Email\nX-1,10,2025-01-01,a@example.org\n",
        dryRun: false,
      }),
      // A campaign given that the organization lacks.
      importGifts(db, {
        organizationId: org.organizationId,
        fileName: "x.csv",
        content: "external_id,amount,date,email\nX-1,10,2025-01-01,a@example.org\n",
        campaign: "nowhere",
        dryRun: false,
      }),
      // No amount column.
      importGifts(db, {
        organizationId: org.organizationId,
        fileName: "x.csv",
        content: "external_id,date,email\nX-1,2025-01-01,a@example.org\n",
        campaign: "Spring Appeal",
        dryRun: false,
      }),
      // Not UTF-8.
      importGifts(db, {
        organizationId: org.organizationId,
        fileName: "x.csv",
        content: Buffer.from([0x61, 0x6d, 0x6f, 0x75, 0x6e, 0x74, 0x0a, 0xe8, 0x0a]),
        campaign: "Spring Appeal",
        dryRun: false,
      }),
    ];
    const errors = await Promise.all(
      refusals.map((each) =>
        each.then(
          () => null,
          (error: unknown) => error,
        ),
      ),
    );
    for (const error of errors) expect(error).toBeInstanceOf(AppError);
    expect((errors as AppError[]).map((error) => error.message)).toEqual([
      "The file cannot be imported: no column names a gift's campaign: map one, or name the campaign of every row",
      'The file cannot be imported: the campaign "nowhere" is not one of the organization\'s (by title or slug)',
      "The file cannot be imported: no column names a gift's amount: give a mapping",
      "The file cannot be imported: it is not UTF-8 text (save it as CSV UTF-8)",
    ]);
    expect(await tally(db, org.organizationId)).toEqual(before);

    // With a campaign for every row and field names as headers, a plain file imports.
    const plain = await importGifts(db, {
      organizationId: org.organizationId,
      fileName: "plain.csv",
      content:
        "external_id;amount;date;email;first_name;supporter_external_id\n" +
        "X-1;10,50;2025-01-01;new.donor@example.org;Nuovo;\n" +
        "X-2;7;2025-01-02;;;NOBODY-HERE\n",
      campaign: "spring appeal",
      dryRun: false,
      now: NOW,
    });
    expect(plain).toMatchObject({ created: 1, refused: 1 });
    // A donor named only by an id that matches nobody: who they are is not known.
    expect(plain.results[1]?.problems).toEqual([
      {
        column: "supporter_external_id",
        field: "supporter_external_id",
        message:
          "the donor's id matches no supporter here: import the supporters first, or give the donor's email or name",
      },
    ]);
  });
});
