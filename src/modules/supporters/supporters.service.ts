import type { Scope } from "../../auth/scope.js";
import type { Db, Executor } from "../../db/client.js";
import { createUpdateBounds, pageOf, parseOrder } from "../../db/list-query.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { scrubSupporterEvents } from "../../events/events.repo.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { idempotent } from "../../http/idempotency.js";
import { parseId } from "../../http/ids.js";
import { fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { clearGiftWordsOfSupporter, listSupporterDonationRows } from "../donations/donations.repo.js";
import { donationToWire } from "../donations/donations.service.js";
import { findPaymentMethodsByIds } from "../payment-methods/payment-methods.repo.js";
import { listDonationPaymentRows } from "../payments/payments.repo.js";
import { paymentToWire } from "../payments/payments.service.js";
import { consentRecordToWire, listConsentRecords } from "./consent-records.repo.js";
import { findSupporterMerge } from "./supporter-merges.repo.js";
import { deleteSupporterNotesOf, listSupporterNoteRows } from "./supporter-notes.repo.js";
import {
  eraseSupporterRow,
  findSupporterRow,
  insertSupporterRow,
  listSupporterRows,
  lockSupporter,
  type SupporterColumns,
  type SupporterRow,
  supporterWireRow,
  updateSupporterRow,
} from "./supporters.repo.js";
import type { SupporterInput, SupporterListQuery, SupporterPatch, SupporterWire } from "./supporters.schemas.js";

export function supporterToWire(row: SupporterRow): SupporterWire {
  return supporterWireRow.fromRow(row);
}

export async function listSupporters(db: Db, scope: Scope, query: SupporterListQuery) {
  const { rows, count } = await listSupporterRows(
    db,
    scope,
    {
      q: query.q,
      email: query.email,
      tag: query.tag,
      country: query.country,
      externalId: query.external_id,
      ...createUpdateBounds(query),
    },
    parseOrder(query.order),
    pageOf(query),
  );
  return { items: rows.map(supporterToWire), count };
}

export async function getSupporter(db: Db, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Supporter");
  const row = await findSupporterRow(db, scope, id);
  if (!row) throw await supporterNotFound(db, scope, id);
  return supporterToWire(row);
}

/** Not found; a supporter merged into another says into which (the gifts and consents are there now). */
async function supporterNotFound(db: Executor, scope: Scope, id: number): Promise<AppError> {
  const merge = await findSupporterMerge(db, scope.organizationId, id);
  return merge
    ? new AppError("not_found", `Supporter not found: it was merged into supporter ${merge.keptId}`)
    : notFound("Supporter");
}

/** The column of each writable supporter field (also used by the checkout flow). */
export const SUPPORTER_COLUMNS: Record<keyof SupporterPatch, keyof SupporterColumns> = {
  image: "image",
  code: "code",
  business_name: "businessName",
  first_name: "firstName",
  last_name: "lastName",
  email: "email",
  phone: "phone",
  mobile: "mobile",
  job: "job",
  sex: "sex",
  date_of_birth: "dateOfBirth",
  place_of_birth: "placeOfBirth",
  ssn: "ssn",
  vat: "vat",
  address: "address",
  address2: "address2",
  city: "city",
  locality: "locality",
  country: "country",
  postal_code: "postalCode",
  privacy: "privacy",
  email_marketing: "emailMarketing",
  phone_marketing: "phoneMarketing",
  sms_marketing: "smsMarketing",
  postal_marketing: "postalMarketing",
  profilation_marketing: "profilationMarketing",
  tags: "tags",
  note: "note",
};

export function supporterColumnsOf(input: SupporterPatch): SupporterColumns {
  const values: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    if (value !== undefined) values[SUPPORTER_COLUMNS[field as keyof SupporterPatch]] = value;
  }
  return values;
}

const identifies = (row: Pick<SupporterWire, "first_name" | "last_name" | "business_name" | "email">) =>
  Boolean(row.first_name || row.last_name || row.business_name || row.email);

/** A new supporter; with an idempotency key, a retry with the same body answers the first outcome. */
export async function createSupporter(db: Db, scope: Scope, input: SupporterInput, idempotencyKey?: string) {
  if (!identifies({ first_name: null, last_name: null, business_name: null, email: null, ...input })) {
    throw new AppError("invalid_request", "A supporter needs a name, a business name or an email", {
      errors: [fieldIssue("email", fieldProblem("name_or_email_required"))],
    });
  }
  const outcome = await withEvents(db, (tx) =>
    idempotent(tx, scope.organizationId, "supporters:create", idempotencyKey, input, async () => {
      const supporter = supporterToWire(await insertSupporterRow(tx, scope, supporterColumnsOf(input)));
      await recordEvent(tx, scope, "supporter.created", supporter.id, supporter);
      return { status: 201, body: supporter };
    }),
  );
  return outcome.replayed ? { ...outcome, body: storedSupporterToWire(outcome.body) } : outcome;
}

/** A supporter kept in a stored answer (an Idempotency-Key's outcome), in today's shape: later fields empty. */
export function storedSupporterToWire(stored: SupporterWire): SupporterWire {
  return { ...stored, external_id: stored.external_id ?? null };
}

async function requireLiveSupporter(db: Executor, scope: Scope, rawId: string, options: { lock?: boolean } = {}) {
  const id = parseId(rawId, "Supporter");
  // An edit or an erasure holds the row: the other waits, then sees what the first left (its "before").
  if (options.lock) await lockSupporter(db, scope.organizationId, id);
  const row = await findSupporterRow(db, scope, id);
  if (!row) throw await supporterNotFound(db, scope, id);
  return row;
}

export async function updateSupporter(db: Db, scope: Scope, rawId: string, patch: SupporterPatch) {
  return withEvents(db, async (tx) => {
    const existing = await requireLiveSupporter(tx, scope, rawId, { lock: true });
    if (existing.eraseDate) {
      throw new AppError("supporter_erased", "This supporter's personal data was erased; it cannot be edited");
    }
    const merged = { ...supporterToWire(existing), ...patch };
    if (!identifies(merged)) {
      throw new AppError("invalid_request", "A supporter needs a name, a business name or an email", {
        errors: [fieldIssue("email", fieldProblem("name_or_email_required"))],
      });
    }
    const row = await updateSupporterRow(tx, scope, existing.id, supporterColumnsOf(patch));
    if (!row) throw new AppError("supporter_erased", "This supporter's personal data was erased; it cannot be edited");
    const supporter = supporterToWire(row);
    await recordEvent(tx, scope, "supporter.updated", supporter.id, supporter, {
      before: supporterToWire(existing),
    });
    return supporter;
  });
}

/** Everything held about a supporter, for a data subject access request (GDPR art. 15 and 20). */
export async function exportSupporter(db: Db, scope: Scope, rawId: string) {
  const supporter = await requireLiveSupporter(db, scope, rawId);
  const donationRows = await listSupporterDonationRows(db, scope, supporter.id);
  const paymentRows =
    donationRows.length === 0
      ? []
      : await listDonationPaymentRows(
          db,
          scope,
          donationRows.map((row) => row.id),
        );
  const methods = await findPaymentMethodsByIds(
    db,
    scope.organizationId,
    paymentRows.map((row) => row.paymentMethodId),
  );
  const consents = await listConsentRecords(db, scope.organizationId, supporter.id);
  // What the organization's people wrote about them is their personal data too (GDPR art. 15).
  const notes = await listSupporterNoteRows(db, scope.organizationId, supporter.id);
  // An access request is part of the record too: who asked for whose data, and when (none of the data itself).
  await withEvents(db, (tx) =>
    recordEvent(tx, scope, "supporter.exported", supporter.id, {
      id: supporter.id,
      donations: donationRows.length,
      payments: paymentRows.length,
      consent_records: consents.length,
      notes: notes.length,
    }),
  );
  return {
    export_date: new Date().toISOString(),
    supporter: supporterToWire(supporter),
    donations: donationRows.map(donationToWire),
    payments: paymentRows.map((row) => paymentToWire(row, methods.get(row.paymentMethodId ?? 0))),
    consent_records: consents.map(consentRecordToWire),
    notes: notes.map((note) => ({
      id: note.id,
      create_date: note.createDate.toISOString(),
      author_name: note.authorName,
      body: note.body,
    })),
  };
}

/**
 * Erases a supporter's personal data (GDPR art. 17). Donations and payments stay, linked to the
 * anonymous record, because accounting law requires them.
 */
export async function eraseSupporter(db: Db, scope: Scope, rawId: string) {
  return withEvents(db, async (tx) => {
    const existing = await requireLiveSupporter(tx, scope, rawId, { lock: true });
    const cleared = Object.fromEntries(Object.values(SUPPORTER_COLUMNS).map((column) => [column, null]));
    const row = await eraseSupporterRow(
      tx,
      scope,
      existing.id,
      // The id on the platform they were imported from identifies them there: it goes too (a later
      // import of that row makes a new supporter, for the organization to decide about).
      { ...cleared, code: existing.code, tags: [], certificationUrl: null, externalId: null },
      existing.eraseDate,
    );
    if (!row) throw notFound("Supporter");
    const supporter = supporterToWire(row);
    // Their gifts keep amounts and dates (accounting), not the words they wrote or the people they named.
    await clearGiftWordsOfSupporter(tx, scope.organizationId, existing.id);
    // Notes written about them are personal data as well.
    await deleteSupporterNotesOf(tx, scope.organizationId, existing.id);
    // What the record held about them goes too; erasing again records nothing new.
    await scrubSupporterEvents(tx, scope.organizationId, supporter.id, supporter);
    if (!existing.eraseDate) await recordEvent(tx, scope, "supporter.erased", supporter.id, supporter);
    return supporter;
  });
}
