import { createHash } from "node:crypto";
import { base, en, Faker } from "@faker-js/faker";
import type { Database } from "../db/client.js";
import { campaigns, checkouts, donations, jobs, paymentMethods, payments, supporters } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { requireOrganization } from "../modules/organizations/organizations.service.js";
import { cycleDueDate, MAX_RENEWAL_FAILURES, retryDate } from "../payments/schedule.js";
import { allocateIds, insertChunks, setCertificationUrls, vacuumAnalyze } from "./seed.repo.js";

export interface SeedOptions {
  organization: string;
  campaigns: number;
  supporters: number;
  checkouts: number;
  randomSeed: number;
  /** Dates are spread over the two years before this instant; fixed by default so runs repeat. */
  now?: Date;
  /** Signs receipt and statement links of the paid gifts; without it they stay null. */
  links?: DocumentLinks;
  onProgress?: (done: number, total: number) => void;
}

export interface SeedCounts {
  organization: string;
  campaigns: number;
  supporters: number;
  payment_methods: number;
  donations: number;
  payments: number;
  checkouts: number;
}

type CampaignInsert = typeof campaigns.$inferInsert;
type SupporterInsert = typeof supporters.$inferInsert;
type MethodInsert = typeof paymentMethods.$inferInsert;
type DonationInsert = typeof donations.$inferInsert;
type PaymentInsert = typeof payments.$inferInsert;
type CheckoutInsert = typeof checkouts.$inferInsert;
type JobInsert = typeof jobs.$inferInsert;

const DAY = 86_400_000;
export const SEED_LIMITS = { campaigns: 1000, supporters: 1_000_000, checkouts: 1_000_000 };

const CAUSES = [
  ["Clean Water", "one water filter", 15],
  ["School Kits", "one school kit", 10],
  ["Winter Shelter", "one night of shelter", 25],
  ["Reforestation", "ten trees", 20],
  ["Meals on Wheels", "one week of meals", 30],
  ["Emergency Relief", "one emergency kit", 50],
  ["Library Books", "one library book", 12],
  ["Animal Rescue", "one vaccination", 18],
  ["Scholarships", "one month of tuition", 100],
  ["Medical Care", "one doctor visit", 40],
] as const;
const CAMPAIGN_TYPES = ["donation", "donation", "donation", "membership", "emergency", "event"];
const CARD_BRANDS = ["Visa", "Mastercard", "Amex"];
const TAGS = ["major-donor", "newsletter", "volunteer", "board", "event-2026", "legacy", "corporate", "monthly"];
const SUPPORTER_FIELDS = ["first_name", "last_name", "email", "phone", "address", "city", "postal_code", "country"];
/** The worker charges a due renewal within a few minutes of its due date. */
const WORKER_LAG = { min: 5_000, max: 300_000 };
/** What the sandbox processor answers for a declined card. */
const DECLINED = { failureCode: "card_declined", failureMessage: "The card was declined" };
/** The sandbox processor's intent id for a charge's idempotency key (and cheaper than faker's strings). */
const sandboxIntentId = (key: string) => `sbx_pi_${createHash("sha256").update(key).digest("hex").slice(0, 24)}`;

/**
 * Realistic, deterministic data for one organization: campaigns, supporters with consents,
 * payment methods, and checkouts in every state with their donations and payments.
 */
export async function seedOrganization(database: Database, options: SeedOptions): Promise<SeedCounts> {
  for (const key of ["campaigns", "supporters", "checkouts"] as const) {
    const value = options[key];
    if (!Number.isInteger(value) || value < 0 || value > SEED_LIMITS[key]) {
      throw new AppError("invalid_request", `--${key} must be an integer from 0 to ${SEED_LIMITS[key]}`);
    }
  }
  if (options.checkouts > 0 && (options.campaigns === 0 || options.supporters === 0)) {
    throw new AppError("invalid_request", "checkouts need at least one campaign and one supporter");
  }
  const faker = new Faker({ locale: [en, base] });
  faker.seed(options.randomSeed);
  const now = (options.now ?? new Date(Date.UTC(2026, 10, 1))).getTime();
  const pick = <T>(items: readonly T[]): T => items[faker.number.int(items.length - 1)] as T;
  const chance = (p: number) => faker.number.float({ min: 0, max: 1 }) < p;
  const dateWithin = (fromMs: number, toMs: number) => new Date(faker.number.int({ min: fromMs, max: toMs }));

  const { db } = database;
  const result = await db.transaction(async (tx) => {
    const organization = await requireOrganization(tx, options.organization);
    const orgId = organization.id;
    const currency = organization.currency;
    const total = options.campaigns + options.supporters * 2 + options.checkouts * 3;
    let done = 0;
    const progress = (n: number) => {
      done += n;
      options.onProgress?.(Math.min(done, total), total);
    };

    const campaignIds = await allocateIds(tx, "campaigns", options.campaigns);
    const campaignRows: CampaignInsert[] = campaignIds.map((id, index) => {
      const [cause, costLabel, costAmount] = pick(CAUSES);
      const year = 2024 + faker.number.int(2);
      const hasSubscription = chance(0.8);
      const hasOneOff = !hasSubscription || chance(0.85);
      const createDate = dateWithin(now - 730 * DAY, now - 30 * DAY);
      return {
        organizationId: orgId,
        id,
        createDate,
        updateDate: dateWithin(createDate.getTime(), now),
        title: `${cause} ${year}${index >= CAUSES.length ? ` #${index + 1}` : ""}`,
        slug: `${cause.toLowerCase().replace(/ /g, "-")}-${year}-${id}`,
        code: `CMP-${String(id).padStart(5, "0")}`,
        type: pick(CAMPAIGN_TYPES),
        goal: chance(0.7) ? faker.number.int({ min: 5, max: 500 }) * 1000 : null,
        isGoalEnabled: chance(0.6),
        hasOneOff,
        hasSubscription,
        allowCustomAmount: chance(0.9),
        allowCustomSubscriptionAmount: chance(0.8),
        defaultAmount: 50,
        defaultSubscriptionAmount: 15,
        minAmount: 5,
        maxAmount: 10000,
        minSubscriptionAmount: 5,
        maxSubscriptionAmount: 1000,
        asks: ["25", "50", "100", "250"],
        asksSubscription: ["10", "15", "25", "50"],
        shownFields: SUPPORTER_FIELDS,
        requiredFields: ["first_name", "last_name", "email"],
        privacyNote: "We use your data only to process your gift and, if you agree, to keep you informed.",
        tags: faker.helpers.arrayElements(["2026", "appeal", "spring", "year-end", "matching"], { min: 0, max: 2 }),
        // A cost example is an amount and a label together, or neither (campaign rule).
        ...(chance(0.8)
          ? { costExampleAmount: costAmount, costExampleLabel: costLabel }
          : { costExampleAmount: null, costExampleLabel: null }),
      };
    });
    await insertChunks(tx, campaigns, campaignRows, progress);

    const supporterIds = await allocateIds(tx, "supporters", options.supporters);
    const supporterRows: SupporterInsert[] = supporterIds.map((id) => {
      const business = chance(0.05);
      const sex = faker.helpers.arrayElement(["MALE", "FEMALE"] as const);
      const firstName = faker.person.firstName(sex === "MALE" ? "male" : "female");
      const lastName = faker.person.lastName();
      const createDate = dateWithin(now - 730 * DAY, now);
      const marketing = chance(0.6);
      return {
        organizationId: orgId,
        id,
        createDate,
        updateDate: dateWithin(createDate.getTime(), now),
        code: `SUP-${String(id).padStart(7, "0")}`,
        businessName: business ? faker.company.name() : null,
        firstName,
        lastName,
        email: faker.internet.email({ firstName, lastName, provider: `example.org` }).replace("@", `.${id}@`),
        phone: chance(0.5) ? faker.phone.number({ style: "international" }) : null,
        mobile: chance(0.6) ? faker.phone.number({ style: "international" }) : null,
        job: chance(0.4) ? faker.person.jobTitle() : null,
        sex: business ? null : sex,
        dateOfBirth: chance(0.5)
          ? faker.date.birthdate({ min: 18, max: 90, mode: "age", refDate: now }).toISOString().slice(0, 10)
          : null,
        placeOfBirth: chance(0.3) ? faker.location.city() : null,
        vat: business ? `VAT${faker.string.numeric(9)}` : null,
        address: faker.location.streetAddress(),
        address2: chance(0.2) ? faker.location.secondaryAddress() : null,
        city: faker.location.city(),
        locality: chance(0.3) ? faker.location.state() : null,
        country: faker.location.countryCode(),
        postalCode: faker.location.zipCode(),
        privacy: true,
        emailMarketing: marketing,
        phoneMarketing: marketing && chance(0.3),
        smsMarketing: marketing && chance(0.3),
        postalMarketing: chance(0.4),
        profilationMarketing: chance(0.2),
        tags: faker.helpers.arrayElements(TAGS, { min: 0, max: 2 }),
        note: chance(0.1) ? faker.lorem.sentence() : null,
      };
    });
    await insertChunks(tx, supporters, supporterRows, progress);

    // A card or bank method per supporter who gave, created lazily below. Recurring gifts need a
    // card (bank transfers cannot be charged again), so a bank-transfer donor who gives monthly has
    // a card as well: at most two methods per supporter.
    type Method = { id: number; processor: string };
    const methodRows: MethodInsert[] = [];
    const methodBySupporter = new Map<number, Method>();
    const cardBySupporter = new Map<number, Method>();
    const methodIds = await allocateIds(tx, "payment_methods", Math.min(options.supporters * 2, options.checkouts));
    const methodFor = (supporterId: number, at: Date, recurring: boolean): Method => {
      const existing = (recurring ? cardBySupporter : methodBySupporter).get(supporterId);
      if (existing !== undefined) return existing;
      const id = methodIds[methodRows.length] as number;
      const processor = recurring || !chance(0.12) ? "sandbox" : "manual";
      methodRows.push({
        organizationId: orgId,
        id,
        createDate: at,
        updateDate: at,
        supporterId,
        processor,
        label: processor === "manual" ? "Bank transfer" : `${pick(CARD_BRANDS)} •••• ${faker.string.numeric(4)}`,
        // What the processors' tokenize() returns: a sandbox card that always succeeds, or "manual".
        processorReference:
          processor === "manual"
            ? "manual"
            : `sbx_pm_ok_${faker.string.hexadecimal({ length: 16, casing: "lower", prefix: "" })}`,
      });
      const method = { id, processor };
      if (!methodBySupporter.has(supporterId)) methodBySupporter.set(supporterId, method);
      if (processor === "sandbox") cardBySupporter.set(supporterId, method);
      return method;
    };

    /**
     * The billing history of a completed recurring donation up to `now`, as the renewal worker
     * would have written it: one payment per cycle come due since the first charge (`start`, the
     * donation's completed date, which the worker counts cycles from), the donation's billing
     * fields, and the queued renewal job of an active or past_due donation. Revoked ones were
     * cancelled by the donor after some cycles; a past_due one whose retries would have run out by
     * now was revoked by its last failure, as the worker does.
     */
    const renewalRows: PaymentInsert[] = [];
    const jobRows: JobInsert[] = [];
    const bill = (
      donation: { id: number; amount: number; frequency: number; state: string },
      method: Method,
      start: Date,
    ) => {
      const renewal = (at: Date, cycle: number, failures: number, paid: boolean) =>
        renewalRows.push({
          organizationId: orgId,
          donationId: donation.id,
          state: paid ? "PAID" : "FAILED",
          amount: donation.amount,
          currency,
          paymentDate: paid ? at : null,
          paymentMethodId: method.id,
          processorIntentId: sandboxIntentId(`renewal:${donation.id}:${cycle}:${failures}`),
          createDate: at,
          updateDate: at,
          ...(paid ? {} : DECLINED),
        });
      const chargedAt = (due: Date) => new Date(Math.min(due.getTime() + faker.number.int(WORKER_LAG), now));
      // Cycles 1..due are past their due date; dueDates[n] is cycle n's.
      const dueDates = [start];
      let next = cycleDueDate(start, donation.frequency, 1);
      while (next.getTime() <= now) {
        dueDates.push(next);
        next = cycleDueDate(start, donation.frequency, dueDates.length);
      }
      const due = dueDates.length - 1;
      let state = donation.state;
      // A renewal has to have failed for a donation to be past due: a younger one is still active.
      if (state === "past_due" && due === 0) state = "active";
      const paidCycles = state === "revoked" ? faker.number.int(due) : state === "past_due" ? due - 1 : due;
      let last = start;
      for (let cycle = 1; cycle <= paidCycles; cycle++) {
        last = chargedAt(dueDates[cycle] as Date);
        renewal(last, cycle, 0, true);
      }
      if (state === "revoked") {
        // Cancelled by the donor before the next cycle came due.
        const nextDue = (dueDates[paidCycles + 1] ?? next).getTime();
        const cancelled = dateWithin(last.getTime(), Math.max(last.getTime(), Math.min(nextDue - 1, now)));
        return { state, failureCount: 0, nextChargeDate: null, updateDate: cancelled };
      }
      // An active donation's job charges the next cycle when it comes due.
      let cycle = due + 1;
      let nextChargeDate = next;
      let failureCount = 0;
      if (state === "past_due") {
        // The last cycle due was declined, then retried on schedule.ts's retry dates up to now.
        cycle = due;
        nextChargeDate = dueDates[due] as Date;
        while (failureCount < MAX_RENEWAL_FAILURES && (failureCount === 0 || nextChargeDate.getTime() <= now)) {
          last = chargedAt(nextChargeDate);
          renewal(last, cycle, failureCount, false);
          failureCount += 1;
          nextChargeDate = retryDate(last, failureCount);
        }
        // A cycle too old for its retries to be still running: the last one failed and revoked it.
        if (failureCount === MAX_RENEWAL_FAILURES) {
          return { state: "revoked", failureCount, nextChargeDate: null, updateDate: last };
        }
      }
      jobRows.push({
        organizationId: orgId,
        kind: "renewal",
        subjectId: donation.id,
        payload: { cycle },
        runDate: nextChargeDate,
        createDate: last,
        updateDate: last,
      });
      return { state, failureCount, nextChargeDate, updateDate: last };
    };

    const checkoutIds = await allocateIds(tx, "checkouts", options.checkouts);
    const donationIds = await allocateIds(tx, "donations", options.checkouts);
    const paymentIds = await allocateIds(tx, "payments", options.checkouts);
    const donationRows: DonationInsert[] = [];
    const paymentRows: PaymentInsert[] = [];
    const checkoutRows: CheckoutInsert[] = [];
    const campaignById = new Map(campaignRows.map((row) => [row.id as number, row]));

    const paidSupporters = new Set<number>();
    checkoutIds.forEach((checkoutId, index) => {
      const campaign = campaignById.get(pick(campaignIds)) as CampaignInsert;
      const completed = chance(0.72);
      // Checkouts still OPEN are recent; older unfinished ones were closed by the expiry job.
      const inProgress = !completed && chance(0.2);
      const createDate = inProgress
        ? dateWithin(now - DAY + 60_000, now - 60_000)
        : dateWithin(now - 730 * DAY, now - 60_000);
      const recurring = campaign.hasSubscription && (!campaign.hasOneOff || chance(0.35));
      const frequency = recurring ? (chance(0.85) ? 12 : 1) : 0;
      const asks = (recurring ? campaign.asksSubscription : campaign.asks) ?? ["25"];
      const amount = chance(0.7) ? Number(pick(asks)) : faker.number.int({ min: 5, max: 400 });
      const hasDonor = completed || chance(0.5);
      const base: CheckoutInsert = {
        organizationId: orgId,
        id: checkoutId,
        createDate,
        updateDate: createDate,
        campaignId: campaign.id as number,
        state: inProgress ? "OPEN" : "CLOSED",
        amount: completed || chance(0.7) ? amount : null,
        frequency: completed || chance(0.5) ? frequency : null,
        costExampleQuantity: 0,
      };
      if (!hasDonor) {
        checkoutRows.push(base);
        return;
      }
      const supporterId = pick(supporterIds);
      const donationId = donationIds[index] as number;
      const paymentId = paymentIds[index] as number;
      const paidAt = new Date(Math.min(createDate.getTime() + faker.number.int({ min: 30_000, max: 900_000 }), now));
      const method = methodFor(supporterId, createDate, frequency !== 0);
      let donationState: string;
      let paymentState: string;
      if (completed) {
        paymentState = "PAID";
        if (recurring) donationState = pick(["active", "active", "active", "active", "past_due", "revoked"]);
        else if (chance(0.03)) {
          donationState = "revoked";
          paymentState = "REFUNDED";
        } else donationState = "done";
      } else {
        const outcome = pick(["failed", "failed", "pending", "draft"]);
        donationState = outcome === "draft" ? "draft" : "pending";
        paymentState = outcome === "pending" ? "PENDING" : "FAILED";
      }
      const costExample = campaign.costExampleAmount;
      const billing =
        completed && recurring
          ? bill({ id: donationId, amount, frequency, state: donationState }, method, paidAt)
          : {
              state: donationState,
              failureCount: 0,
              nextChargeDate: null,
              updateDate: completed ? paidAt : createDate,
            };
      donationRows.push({
        organizationId: orgId,
        id: donationId,
        supporterId,
        campaignId: campaign.id as number,
        code: `DON-${String(donationId).padStart(8, "0")}`,
        state: billing.state,
        amount,
        currency,
        frequency,
        note: chance(0.05) ? faker.lorem.sentence() : null,
        completedDate: completed ? paidAt : null,
        createDate,
        updateDate: billing.updateDate,
        device: pick(["desktop", "desktop", "mobile", "mobile", "mobile", "tablet"]),
        tags: recurring ? ["recurring"] : [],
        paymentMethodId: method.id,
        nextChargeDate: billing.nextChargeDate,
        failureCount: billing.failureCount,
        receiptUrl: completed && options.links ? options.links.receiptUrl(orgId, donationId) : null,
      });
      if (completed) paidSupporters.add(supporterId);
      if (donationState !== "draft") {
        paymentRows.push({
          organizationId: orgId,
          id: paymentId,
          donationId,
          state: paymentState,
          amount,
          currency,
          paymentDate: paymentState === "PAID" || paymentState === "REFUNDED" ? paidAt : null,
          paymentMethodId: method.id,
          processorIntentId: `${method.processor === "manual" ? "man" : "sbx"}_pi_${faker.string.alphanumeric(20)}`,
          createDate,
          updateDate: paymentState === "PENDING" ? createDate : paidAt,
          ...(paymentState === "FAILED" ? DECLINED : {}),
        });
      }
      checkoutRows.push({
        ...base,
        supporterId,
        donationId,
        paymentId: donationState !== "draft" ? paymentId : null,
        amount,
        frequency,
        completedDate: completed ? paidAt : null,
        updateDate: completed ? paidAt : createDate,
        costExampleQuantity: costExample ? Math.floor(amount / costExample) : 0,
      });
    });

    await insertChunks(tx, paymentMethods, methodRows, () => {});
    await insertChunks(tx, donations, donationRows, progress);
    // The renewals' ids come after the first charges'. They were not known when the bar's total
    // was set: all the payments together advance it by one unit per checkout.
    const renewalIds = await allocateIds(tx, "payments", renewalRows.length);
    renewalRows.forEach((row, index) => {
      row.id = renewalIds[index] as number;
    });
    const allPayments = paymentRows.concat(renewalRows);
    let inserted = 0;
    await insertChunks(tx, payments, allPayments, (n) => {
      const before = Math.floor((inserted * options.checkouts) / allPayments.length);
      inserted += n;
      progress(Math.floor((inserted * options.checkouts) / allPayments.length) - before);
    });
    await insertChunks(tx, checkouts, checkoutRows, progress);
    await insertChunks(tx, jobs, jobRows, () => {});
    const { links } = options;
    if (links && paidSupporters.size > 0) {
      const statements = [...paidSupporters].map((id) => ({ id, url: links.statementUrl(orgId, id) }));
      await setCertificationUrls(tx, orgId, statements);
    }
    options.onProgress?.(total, total);
    return {
      organization: organization.slug,
      campaigns: campaignRows.length,
      supporters: supporterRows.length,
      payment_methods: methodRows.length,
      donations: donationRows.length,
      payments: allPayments.length,
      checkouts: checkoutRows.length,
    };
  });
  // Fresh statistics and visibility map, so lists use index-only scans right away.
  await vacuumAnalyze(db, ["campaigns", "supporters", "payment_methods", "donations", "payments", "checkouts", "jobs"]);
  return result;
}
