import type { Db, Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { cycleDueDate } from "../../payments/schedule.js";
import { createImportedCampaign } from "../campaigns/campaigns.service.js";
import { type DonationRow, insertDonation, nextDonationId } from "../donations/donations.repo.js";
import { donationToWire } from "../donations/donations.service.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import { insertPaymentMethod, type PaymentMethodRow } from "../payment-methods/payment-methods.repo.js";
import { insertPayment, type PaymentRow, paymentToWire, updatePayment } from "../payments/payments.repo.js";
import {
  insertSupporterRows,
  lockSupportersForImport,
  type SupporterColumns,
  type SupporterRow,
} from "../supporters/supporters.repo.js";
import type { SupporterPatch } from "../supporters/supporters.schemas.js";
import { supporterColumnsOf, supporterToWire } from "../supporters/supporters.service.js";
import { findMethods, listCampaignNames, lockImportedDonations, lockImportedPayments } from "./gift-import.repo.js";
import { checkGiftRow, type GiftRow } from "./gift-rows.js";
import { GIFT_IMPORT_FIELDS, type ImportPreset, mapColumns } from "./import-columns.js";
import { fileProblem, readCsv } from "./import-file.js";
import { importSummary, type RowOutcome, resultsCsv } from "./import-results.js";
import type { RowProblem } from "./import-rows.js";
import { MAX_IMPORT_ROWS, problemsText } from "./supporter-import.service.js";

/** Rows per transaction, about: a recurring gift's payments always go in one. */
const DEFAULT_BATCH = 500;

export interface GiftRowResult {
  line: number;
  external_id: string | null;
  outcome: RowOutcome;
  supporter_id: number | null;
  donation_id: number | null;
  payment_id: number | null;
  problems: RowProblem[];
}

export interface GiftImportRequest {
  organizationId: number;
  fileName: string;
  content: string | Buffer;
  preset?: ImportPreset;
  /** Header → field (or "ignore"), over the preset's. */
  mapping?: Readonly<Record<string, string>>;
  /** The campaign (slug or title) of rows that name none. */
  campaign?: string;
  dryRun: boolean;
  batchSize?: number;
  origin?: EventOrigin;
  onProgress?: (done: number, total: number) => void;
  now?: Date;
}

export interface GiftImportResult {
  file: string;
  kind: "donations";
  preset: ImportPreset | null;
  dry_run: boolean;
  columns: { mapping: Record<string, string>; ignored: string[] };
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  /** Campaigns the file names that the organization did not have: made as drafts. */
  campaigns_created: string[];
  /** Recurring gifts still running on the other platform: imported charging nobody until turned on. */
  recurring_awaiting: number;
  results: GiftRowResult[];
}

/** One donation of the file: a one-off gift's row, or a recurring gift's payments (oldest first). */
interface GiftGroup {
  rows: GiftRow[];
  recurring: boolean;
  /** The plan's id on the other platform (recurring only; without one the group has none). */
  externalId: string | null;
}

const nameKey = (name: string) => name.normalize("NFKC").trim().toLowerCase();

/** Who gave a row: the donor's id there, else the email, else the name (how a plan without an id is grouped). */
const donorKey = (row: GiftRow) =>
  row.supporterExternalId
    ? `id:${row.supporterExternalId}`
    : row.donor.email
      ? `email:${row.donor.email.toLowerCase()}`
      : `name:${[row.donor.first_name, row.donor.last_name, row.donor.business_name].join("|").toLowerCase()}`;

/**
 * The file's donations: each one-off row its own; a recurring gift's rows together, by the plan's id
 * (or, without one, by donor, campaign, frequency and amount). A row repeating an earlier row's id, or
 * a plan whose rows name two donors, is refused: which one is meant is for a person to say.
 */
function groupGifts(rows: GiftRow[], columnOf: (field: string) => string): GiftGroup[] {
  const seen = new Map<string, number>();
  const groups: GiftGroup[] = [];
  const plans = new Map<string, GiftGroup>();
  for (const row of rows) {
    if (row.problems.length > 0) continue;
    const first = row.externalId ? seen.get(row.externalId) : undefined;
    if (first !== undefined) {
      row.problems.push({
        column: columnOf("external_id"),
        field: "external_id",
        message: `the same id as line ${first}`,
      });
      continue;
    }
    if (row.externalId) seen.set(row.externalId, row.line);
    if (row.frequency === 0 && row.recurringId === null) {
      groups.push({ rows: [row], recurring: false, externalId: null });
      continue;
    }
    const key = row.recurringId
      ? `plan:${row.recurringId}`
      : `${donorKey(row)}|${nameKey(row.campaign ?? "")}|${row.frequency}|${row.amount}`;
    const plan = plans.get(key);
    if (!plan) {
      const group = { rows: [row], recurring: true, externalId: row.recurringId };
      plans.set(key, group);
      groups.push(group);
      continue;
    }
    const earlier = plan.rows[0] as GiftRow;
    if (donorKey(earlier) !== donorKey(row)) {
      row.problems.push({
        column: columnOf("recurring_id"),
        field: "recurring_id",
        message: `the same recurring gift as line ${earlier.line}, from another donor`,
      });
      continue;
    }
    if (row.frequency !== earlier.frequency) {
      row.problems.push({
        column: columnOf("frequency"),
        field: "frequency",
        message: `the same recurring gift as line ${earlier.line}, at another frequency`,
      });
      continue;
    }
    plan.rows.push(row);
  }
  for (const group of groups) group.rows.sort((a, b) => (a.date?.getTime() ?? 0) - (b.date?.getTime() ?? 0));
  return groups;
}

class DryRun extends Error {}

const sameInstant = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * Imports gift history from a CSV file (docs/import.md): each row one payment received on the other
 * platform, grouped into donations (a recurring gift's payments by its plan). Donors are matched by
 * their id there, else by email, else created; a campaign the file names is matched by title or slug,
 * else made as a draft. Payments are created PAID (or REFUNDED) with `donation.created` and
 * `payment.created` events and nothing else: no receipt, no email (the money was received, and
 * acknowledged, on the other platform). A recurring gift still running there is imported charging
 * nobody, until an admin turns it on. Importing the same file again changes nothing; a payment
 * refunded since is updated. A dry run does everything in transactions rolled back.
 */
export async function importGifts(db: Db, request: GiftImportRequest): Promise<GiftImportResult> {
  const organization = await findOrganizationById(db, request.organizationId);
  if (!organization) throw new AppError("organization_not_found", "Organization not found");
  const now = request.now ?? new Date();
  const table = readCsv(request.content);
  const [headers, ...body] = table;
  if (!headers || headers.every((header) => header.trim() === "")) throw fileProblem("it has no header line");
  if (body.length > MAX_IMPORT_ROWS) {
    throw fileProblem(`it has ${body.length} rows; at most ${MAX_IMPORT_ROWS} in one file (split it)`);
  }
  const { mapping, ignored, problems } = mapColumns(
    headers,
    { preset: request.preset, explicit: request.mapping },
    "donations",
  );
  if (problems.length > 0) throw fileProblem(problems.join("; "));
  const campaigns = await listCampaignNames(db, organization.id);
  const campaignByName = new Map<string, number>();
  for (const campaign of campaigns) {
    campaignByName.set(nameKey(campaign.title), campaign.id);
    if (campaign.slug) campaignByName.set(nameKey(campaign.slug), campaign.id);
  }
  const fallbackCampaign = request.campaign?.trim() ? nameKey(request.campaign) : null;
  if (fallbackCampaign !== null && !campaignByName.has(fallbackCampaign)) {
    throw fileProblem(`the campaign "${request.campaign}" is not one of the organization's (by title or slug)`);
  }
  if (mapping.campaign === undefined && fallbackCampaign === null) {
    throw fileProblem("no column names a gift's campaign: map one, or name the campaign of every row");
  }

  const rows = body.map((cells, index) => checkGiftRow(index + 2, cells, headers, mapping, organization.currency, now));
  const columnOf = (field: string) => {
    const index = mapping[field];
    return index === undefined ? field : (headers[index] ?? field);
  };
  for (const row of rows) {
    if (row.problems.length === 0 && row.campaign === null && fallbackCampaign === null) {
      row.problems.push({
        column: columnOf("campaign"),
        field: "campaign",
        message: "a gift needs its campaign",
      });
    }
  }
  const groups = groupGifts(rows, columnOf);
  const results: GiftRowResult[] = rows.map((row) => ({
    line: row.line,
    external_id: row.externalId,
    outcome: "refused",
    supporter_id: null,
    donation_id: null,
    payment_id: null,
    problems: row.problems,
  }));
  const resultOf = (row: GiftRow) => results[row.line - 2] as GiftRowResult;
  const scope = { organizationId: organization.id, timeZone: organization.timeZone, origin: request.origin };
  const campaignsCreated = new Set<string>();
  let awaiting = 0;
  const batchSize = request.batchSize ?? DEFAULT_BATCH;
  let done = 0;
  for (let start = 0; start < groups.length; ) {
    const batch: GiftGroup[] = [];
    let size = 0;
    while (
      start < groups.length &&
      (batch.length === 0 || size + (groups[start] as GiftGroup).rows.length <= batchSize)
    ) {
      const group = groups[start++] as GiftGroup;
      batch.push(group);
      size += group.rows.length;
    }
    const outcomes = new Map<
      number,
      Omit<GiftRowResult, "line" | "external_id" | "problems"> & { problem?: RowProblem }
    >();
    let batchAwaiting = 0;
    // What this batch made (a dry run's records have no ids to report: nothing was written).
    const newRecords = new Set<string>();
    const batchCampaigns: string[] = [];
    try {
      await withEvents(db, async (tx) => {
        const batchRows = batch.flatMap((group) => group.rows);
        // Campaigns named and missing are made first (as drafts), once per name.
        const campaignOf = new Map(campaignByName);
        for (const row of batchRows) {
          const name = row.campaign ? nameKey(row.campaign) : (fallbackCampaign as string);
          if (campaignOf.has(name)) continue;
          const created = await createImportedCampaign(tx, scope, (row.campaign as string).trim());
          campaignOf.set(name, created.id);
          batchCampaigns.push((row.campaign as string).trim());
        }
        const supporters = await lockSupportersForImport(
          tx,
          organization.id,
          batchRows.flatMap((row) => (row.supporterExternalId ? [row.supporterExternalId] : [])),
          batchRows.flatMap((row) => (row.donor.email ? [row.donor.email] : [])),
        );
        const byExternalId = new Map(supporters.flatMap((row) => (row.externalId ? [[row.externalId, row]] : [])));
        const byEmail = new Map<string, SupporterRow>();
        for (const row of supporters) {
          const email = row.email?.toLowerCase();
          if (email && !byEmail.has(email)) byEmail.set(email, row);
        }
        const payments = new Map(
          (
            await lockImportedPayments(
              tx,
              organization.id,
              batchRows.flatMap((row) => (row.externalId ? [row.externalId] : [])),
            )
          ).map((payment) => [payment.externalId as string, payment]),
        );
        const donations = await lockImportedDonations(
          tx,
          organization.id,
          [...new Set([...payments.values()].map((payment) => payment.donationId))],
          batch.flatMap((group) => (group.externalId ? [group.externalId] : [])),
        );
        const donationById = new Map(donations.map((donation) => [donation.id, donation]));
        const donationByExternalId = new Map(
          donations.flatMap((donation) => (donation.externalId ? [[donation.externalId, donation]] : [])),
        );
        const methods = new Map(
          (
            await findMethods(
              tx,
              organization.id,
              [...payments.values()].flatMap((payment) => (payment.paymentMethodId ? [payment.paymentMethodId] : [])),
            )
          ).map((method) => [method.id, method]),
        );

        // Donors the file names and Donata does not have yet: created together, once each.
        const newDonors = new Map<string, { columns: SupporterColumns; row?: SupporterRow }>();
        const supporterOf = (row: GiftRow) =>
          (row.supporterExternalId ? byExternalId.get(row.supporterExternalId) : undefined) ??
          (row.donor.email ? byEmail.get(row.donor.email.toLowerCase()) : undefined);
        // A donor named only by an id that matches nobody here cannot be made: nothing says who they are.
        const nameless = (row: GiftRow) =>
          !row.donor.email && !row.donor.first_name && !row.donor.last_name && !row.donor.business_name;
        for (const group of batch) {
          const first = group.rows[0] as GiftRow;
          if (supporterOf(first) || newDonors.has(donorKey(first)) || nameless(first)) continue;
          newDonors.set(donorKey(first), {
            columns: {
              ...supporterColumnsOf(first.donor as SupporterPatch),
              ...(first.supporterExternalId ? { externalId: first.supporterExternalId } : {}),
            },
          });
        }
        const pending = [...newDonors.values()];
        const inserted = await insertSupporterRows(
          tx,
          organization.id,
          pending.map((each) => each.columns),
        );
        for (const [index, row] of inserted.entries()) {
          (pending[index] as (typeof pending)[number]).row = row;
          newRecords.add(`supporter:${row.id}`);
          await recordEvent(tx, scope, "supporter.created", row.id, supporterToWire(row));
          if (row.externalId) byExternalId.set(row.externalId, row);
          if (row.email) byEmail.set(row.email.toLowerCase(), row);
        }

        for (const group of batch) {
          const first = group.rows[0] as GiftRow;
          const last = group.rows.at(-1) as GiftRow;
          const supporter = supporterOf(first);
          if (!supporter) {
            for (const row of group.rows) {
              outcomes.set(row.line, {
                outcome: "refused",
                supporter_id: null,
                donation_id: null,
                payment_id: null,
                problem: {
                  column: columnOf("supporter_external_id"),
                  field: "supporter_external_id",
                  message:
                    "the donor's id matches no supporter here: import the supporters first, or give the donor's email or name",
                },
              });
            }
            continue;
          }
          const campaignId = campaignOf.get(
            first.campaign ? nameKey(first.campaign) : (fallbackCampaign as string),
          ) as number;
          // The donation these payments belong to: the plan's, or the one an imported payment of it has.
          let donation: DonationRow | undefined =
            (group.externalId ? donationByExternalId.get(group.externalId) : undefined) ??
            group.rows
              .map((row) => payments.get(row.externalId as string)?.donationId)
              .map((id) => (id === undefined ? undefined : donationById.get(id)))
              .find((found) => found !== undefined);
          if (donation && donation.supporterId !== supporter.id) {
            for (const row of group.rows) {
              outcomes.set(row.line, {
                outcome: "refused",
                supporter_id: null,
                donation_id: donation.id,
                payment_id: null,
                problem: {
                  column: columnOf("email"),
                  field: "email",
                  message: `imported before (donation ${donation.id}) for another supporter`,
                },
              });
            }
            continue;
          }
          const running = group.recurring && last.recurringActive === true;
          let method: PaymentMethodRow | undefined = donation?.paymentMethodId
            ? methods.get(donation.paymentMethodId)
            : undefined;
          const methodFor = async () => {
            if (method) return method;
            const stripe = group.rows.find((row) => row.stripeCustomer !== null);
            method = await insertPaymentMethod(tx, {
              organizationId: organization.id,
              supporterId: supporter.id,
              ...(running && stripe
                ? {
                    processor: "stripe",
                    label: last.method ?? "Card (imported)",
                    reference: `${stripe.stripeCustomer}/${stripe.stripeMethod}`,
                  }
                : { processor: "manual", label: last.method ?? "Imported", reference: "manual" }),
            });
            return method;
          };
          if (!donation) {
            const id = await nextDonationId(tx);
            const paymentMethod = await methodFor();
            donation = await insertDonation(tx, id, {
              organizationId: organization.id,
              supporterId: supporter.id,
              campaignId,
              state: running ? "pending" : group.recurring ? "revoked" : "done",
              amount: last.amount,
              currency: organization.currency,
              frequency: group.recurring ? last.frequency : 0,
              note: group.recurring ? null : first.note,
              completedDate: first.date,
              paymentMethodId: paymentMethod.id,
              nextChargeDate: running
                ? (last.nextPaymentDate ?? cycleDueDate(last.date as Date, last.frequency, 1))
                : null,
              tributeType: first.tributeType,
              tributeName: first.tributeName,
              externalId: group.externalId,
              activation: running ? "awaiting" : null,
            });
            newRecords.add(`donation:${donation.id}`);
            if (running) batchAwaiting++;
            await recordEvent(tx, scope, "donation.created", donation.id, donationToWire(donation));
          }
          for (const row of group.rows) {
            const existing = payments.get(row.externalId as string);
            if (!existing) {
              const paymentMethod = await methodFor();
              const payment = await insertPayment(tx, {
                organizationId: organization.id,
                donationId: donation.id,
                state: row.state,
                amount: row.amount,
                currency: organization.currency,
                paymentDate: row.date,
                paymentMethodId: paymentMethod.id,
                externalId: row.externalId,
                amountRefunded: row.refunded,
                refundDate: row.refunded > 0 ? row.date : null,
              });
              await recordEvent(tx, scope, "payment.created", payment.id, paymentToWire(payment, paymentMethod));
              outcomes.set(row.line, {
                outcome: "created",
                supporter_id: supporter.id,
                donation_id: donation.id,
                payment_id: payment.id,
              });
              continue;
            }
            outcomes.set(row.line, correctPayment(existing, row, donation.id, supporter.id));
            const outcome = outcomes.get(row.line);
            if (outcome?.outcome !== "updated") continue;
            const updated = await updatePayment(tx, organization.id, existing.id, {
              state: row.state,
              amountRefunded: row.refunded,
              refundDate: existing.refundDate ?? now,
            });
            if (!updated) throw new Error("an import's locked payment vanished");
            await recordEvent(
              tx,
              scope,
              "payment.refunded",
              updated.id,
              paymentToWire(updated, methods.get(updated.paymentMethodId ?? -1)),
              { before: paymentToWire(existing, methods.get(existing.paymentMethodId ?? -1)) },
            );
          }
        }
        if (request.dryRun) throw new DryRun();
      });
      for (const name of batchCampaigns) campaignsCreated.add(name);
      awaiting += batchAwaiting;
      if (!request.dryRun) {
        // Made for good: later batches find them.
        for (const campaign of await listCampaignNames(db, organization.id)) {
          campaignByName.set(nameKey(campaign.title), campaign.id);
          if (campaign.slug) campaignByName.set(nameKey(campaign.slug), campaign.id);
        }
      }
    } catch (error) {
      if (!(error instanceof DryRun)) throw error;
      for (const name of batchCampaigns) campaignsCreated.add(name);
      awaiting += batchAwaiting;
    }
    for (const group of batch) {
      for (const row of group.rows) {
        const outcome = outcomes.get(row.line);
        if (!outcome) continue;
        const result = resultOf(row);
        const { problem, ...rest } = outcome;
        Object.assign(result, rest);
        if (problem) result.problems.push(problem);
        // A dry run's new records have no ids: nothing was written.
        if (request.dryRun && outcome.outcome === "created") {
          result.payment_id = null;
          if (newRecords.has(`donation:${result.donation_id}`)) result.donation_id = null;
          if (newRecords.has(`supporter:${result.supporter_id}`)) result.supporter_id = null;
        }
      }
      done += group.rows.length;
    }
    request.onProgress?.(Math.min(done, rows.length), rows.length);
  }
  if (done < rows.length) request.onProgress?.(rows.length, rows.length);

  const result: GiftImportResult = {
    file: request.fileName,
    kind: "donations",
    preset: request.preset ?? null,
    dry_run: request.dryRun,
    ...importSummary(GIFT_IMPORT_FIELDS, headers, mapping, ignored, results),
    campaigns_created: [...campaignsCreated],
    recurring_awaiting: awaiting,
    results,
  };
  if (!request.dryRun) {
    await withEvents(db, (tx: Executor) =>
      recordEvent(tx, scope, "donations.imported", organization.id, {
        file: result.file,
        preset: result.preset,
        rows: result.rows,
        created: result.created,
        updated: result.updated,
        unchanged: result.unchanged,
        refused: result.refused,
        campaigns_created: result.campaigns_created,
      }),
    );
  }
  return result;
}

/**
 * A payment imported before, read again: unchanged when the file says what Donata holds; updated
 * when it was refunded since (more refunded than before); refused when its amount or date differ,
 * which Donata does not rewrite (correct it in Donata, or in the file).
 */
function correctPayment(
  existing: PaymentRow,
  row: GiftRow,
  donationId: number,
  supporterId: number,
): Omit<GiftRowResult, "line" | "external_id" | "problems"> & { problem?: RowProblem } {
  const ids = { supporter_id: supporterId, donation_id: donationId, payment_id: existing.id };
  if (existing.amount !== row.amount || !sameInstant(existing.paymentDate, row.date)) {
    return {
      outcome: "refused",
      ...ids,
      problem: {
        column: existing.amount !== row.amount ? "amount" : "date",
        field: existing.amount !== row.amount ? "amount" : "date",
        message: `imported before (payment ${existing.id}) with another ${existing.amount !== row.amount ? "amount" : "date"}`,
      },
    };
  }
  if (existing.amountRefunded === row.refunded) return { outcome: "unchanged", ...ids };
  if (row.refunded > existing.amountRefunded) return { outcome: "updated", ...ids };
  return {
    outcome: "refused",
    ...ids,
    problem: {
      column: "refunded_amount",
      field: "refunded_amount",
      message: `imported before (payment ${existing.id}) with more refunded`,
    },
  };
}

/** The results as CSV: one line per row of the file, its outcome, the records, and every problem. */
export function giftImportResultsCsv(result: GiftImportResult): string {
  return resultsCsv(
    ["line", "external_id", "outcome", "supporter_id", "donation_id", "payment_id", "problems"],
    result.results.map((row) => [
      row.line,
      row.external_id,
      row.outcome,
      row.supporter_id,
      row.donation_id,
      row.payment_id,
      problemsText(row.problems),
    ]),
  );
}
