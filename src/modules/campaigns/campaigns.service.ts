import type { Scope } from "../../auth/scope.js";
import type { Db, Executor } from "../../db/client.js";
import { createUpdateBounds, pageOf, parseOrder } from "../../db/list-query.js";
import { AppError, notFound, type ValidationIssue } from "../../errors/app-error.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { idempotent } from "../../http/idempotency.js";
import { parseId } from "../../http/ids.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { largestImageUrl, prepareImage, saveImage } from "../../images/images.service.js";
import { amountDecimals, fitsCurrency, toCents } from "../../payments/money.js";
import { findLegalProfile } from "../legal-profile/legal-profile.repo.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import { type CampaignQuestionWire, QUESTION_LIMITS } from "./campaign-questions.js";
import {
  type CampaignRow,
  campaignWireRow,
  findCampaignRow,
  findSlugsLike,
  insertCampaignRow,
  listCampaignRows,
  updateCampaignCover,
  updateCampaignRow,
} from "./campaigns.repo.js";
import type {
  CampaignInput,
  CampaignListQuery,
  CampaignPatch,
  CampaignQuestionInput,
  CampaignWire,
} from "./campaigns.schemas.js";

export function campaignToWire(row: CampaignRow): CampaignWire {
  return campaignWireRow.fromRow(row);
}

export async function listCampaigns(db: Db, scope: Scope, query: CampaignListQuery) {
  const { rows, count } = await listCampaignRows(
    db,
    scope,
    {
      q: query.q,
      type: query.type,
      tag: query.tag,
      archived: query.archived,
      ...createUpdateBounds(query),
    },
    parseOrder(query.order),
    pageOf(query),
  );
  return { items: rows.map(campaignToWire), count };
}

export async function getCampaign(db: Db, scope: Scope, rawId: string) {
  const row = await findCampaignRow(db, scope, parseId(rawId, "Campaign"));
  if (!row) throw notFound("Campaign");
  return campaignToWire(row);
}

type CampaignFields = Omit<CampaignWire, "id" | "create_date" | "update_date" | "archive_date" | "cover_image_url">;

const CAMPAIGN_DEFAULTS: Omit<CampaignFields, "title"> = {
  slug: null,
  code: null,
  type: "donation",
  goal: null,
  is_goal_enabled: false,
  has_one_off: true,
  has_subscription: true,
  allow_custom_amount: true,
  allow_custom_subscription_amount: true,
  default_amount: null,
  default_subscription_amount: null,
  min_amount: null,
  max_amount: null,
  min_subscription_amount: null,
  max_subscription_amount: null,
  asks: null,
  asks_subscription: null,
  shown_fields: null,
  required_fields: null,
  privacy_note: null,
  tags: [],
  cost_example_amount: null,
  cost_example_label: null,
  allow_cover_fee: false,
  story: null,
  // Published unless asked otherwise: API clients written before drafts keep creating live campaigns.
  status: "published",
  start_date: null,
  end_date: null,
  ask_impacts: [],
  questions: [],
  allow_tribute: false,
};

const MONEY_FIELDS = [
  "goal",
  "default_amount",
  "default_subscription_amount",
  "min_amount",
  "max_amount",
  "min_subscription_amount",
  "max_subscription_amount",
  "cost_example_amount",
] as const;

/** Rules that span fields; the schema has already checked each field alone. */
function campaignRuleViolations(campaign: CampaignFields, currency: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const issue = (field: string, problem: FieldProblem) => issues.push(fieldIssue(field, problem));
  // What fitsCurrency asks: whole units of a currency without minor unit, else at most its decimals.
  const decimals = amountDecimals(currency);
  const units = { currency: currency.toUpperCase() };
  for (const field of MONEY_FIELDS) {
    const value = campaign[field];
    if (value !== null && !fitsCurrency(value, currency))
      issue(field, decimals === 0 ? fieldProblem("whole_units", units) : fieldProblem("max_decimals", { decimals }));
  }
  for (const field of ["asks", "asks_subscription"] as const) {
    if (campaign[field]?.some((value) => !fitsCurrency(value, currency)))
      issue(
        field,
        decimals === 0
          ? fieldProblem("amounts_whole_units", units)
          : fieldProblem("amounts_max_decimals", { decimals }),
      );
  }
  if (!campaign.has_one_off && !campaign.has_subscription) {
    issue("has_subscription", fieldProblem("one_off_or_recurring"));
  }
  const ranges = [
    ["min_amount", "max_amount", "default_amount", "asks"],
    ["min_subscription_amount", "max_subscription_amount", "default_subscription_amount", "asks_subscription"],
  ] as const;
  for (const [minField, maxField, defaultField, asksField] of ranges) {
    const min = campaign[minField] ?? 0;
    const max = campaign[maxField] ?? Number.POSITIVE_INFINITY;
    if (min > max) issue(minField, fieldProblem("not_above_field", { other: maxField }));
    const fallback = campaign[defaultField];
    if (fallback !== null && (fallback < min || fallback > max))
      issue(defaultField, fieldProblem("between_fields", { min: minField, max: maxField }));
    if (campaign[asksField]?.some((ask) => ask < min || ask > max)) {
      issue(asksField, fieldProblem("amounts_between_fields", { min: minField, max: maxField }));
    }
  }
  if (campaign.is_goal_enabled && campaign.goal === null) issue("goal", fieldProblem("goal_required"));
  const shown = campaign.shown_fields ?? [];
  const hidden = (campaign.required_fields ?? []).filter((field) => !shown.includes(field));
  if (hidden.length > 0) issue("required_fields", fieldProblem("required_not_shown", { fields: hidden.join(", ") }));
  if ((campaign.cost_example_amount === null) !== (campaign.cost_example_label === null)) {
    issue("cost_example_label", fieldProblem("cost_example_pair"));
  }
  if (campaign.start_date && campaign.end_date && Date.parse(campaign.end_date) <= Date.parse(campaign.start_date)) {
    issue("end_date", fieldProblem("end_after_start"));
  }
  issues.push(...impactViolations(campaign, currency));
  issues.push(...questionViolations(campaign.questions));
  return issues;
}

/** Each impact line belongs to one suggested amount, of its kind, and an amount has one line at most. */
function impactViolations(campaign: CampaignFields, currency: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  campaign.ask_impacts.forEach((impact, index) => {
    const asks = (impact.recurring ? campaign.asks_subscription : campaign.asks) ?? [];
    const cents = toCents(impact.amount);
    const field = `ask_impacts.${index}.amount`;
    const amount = impact.amount.toFixed(amountDecimals(currency));
    if (!asks.some((ask) => toCents(ask) === cents)) {
      issues.push(
        fieldIssue(
          field,
          impact.recurring
            ? fieldProblem("impact_not_a_recurring_ask", { amount })
            : fieldProblem("impact_not_an_ask", { amount }),
        ),
      );
    }
    const line = `${impact.recurring}:${cents}`;
    if (seen.has(line)) issues.push(fieldIssue(field, fieldProblem("impact_repeated", { amount })));
    seen.add(line);
  });
  return issues;
}

const CHOICE_TYPES = new Set(["single_choice", "multiple_choice"]);

function questionViolations(questions: CampaignQuestionWire[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const keys = new Set<string>();
  questions.forEach((question, index) => {
    if (keys.has(question.key)) {
      issues.push(fieldIssue(`questions.${index}.key`, fieldProblem("question_key_repeated", { key: question.key })));
    }
    keys.add(question.key);
    const options = question.options ?? [];
    const field = `questions.${index}.options`;
    if (CHOICE_TYPES.has(question.type)) {
      if (options.length < 2) {
        issues.push(fieldIssue(field, fieldProblem("question_options_needed", { max: QUESTION_LIMITS.options })));
      } else if (new Set(options.map((option) => option.trim().toLowerCase())).size !== options.length) {
        issues.push(fieldIssue(field, fieldProblem("question_options_repeated")));
      }
    } else if (question.options !== undefined) {
      issues.push(fieldIssue(field, fieldProblem("question_options_not_allowed")));
    }
  });
  return issues;
}

/** Amounts in the organization's currency: whole yen for a JPY organization. */
async function assertCampaignRules(db: Executor, scope: Scope, campaign: CampaignFields) {
  const currency = (await findOrganizationById(db, scope.organizationId))?.currency ?? "EUR";
  const issues = campaignRuleViolations(campaign, currency);
  const first = issues[0];
  if (first)
    throw new AppError("invalid_request", `Invalid field "${first.field}": ${first.message}`, { errors: issues });
}

function fieldsOf(row: CampaignRow): CampaignFields {
  const {
    id: _id,
    create_date: _c,
    update_date: _u,
    archive_date: _a,
    cover_image_url: _cover,
    ...fields
  } = campaignToWire(row);
  return fields;
}

const FOLDED: Record<string, string> = { ß: "ss", æ: "ae", œ: "oe", ø: "o", đ: "d", ł: "l", þ: "th", ð: "d" };

/** Lowercase ASCII words of a title joined by `separator`: accents folded ("Caffè sospeso" → "caffe-sospeso"). */
export function slugWords(text: string, separator: "-" | "_", maxLength: number): string {
  const folded = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[ßæœøđłþð]/g, (letter) => FOLDED[letter] ?? "");
  const words = folded.split(/[^a-z0-9]+/).filter(Boolean);
  let slug = "";
  for (const word of words) {
    const next = slug ? `${slug}${separator}${word}` : word;
    if (next.length > maxLength) break;
    slug = next;
  }
  return slug || words[0]?.slice(0, maxLength) || "";
}

/** A campaign created without a slug gets one from its title, unique in the organization (-2, -3… when taken). */
async function freeSlug(tx: Executor, scope: Scope, title: string): Promise<string> {
  const base = slugWords(title, "-", 90) || "campaign";
  const taken = new Set(await findSlugsLike(tx, scope, base));
  if (!taken.has(base)) return base;
  for (let suffix = 2; ; suffix++) if (!taken.has(`${base}-${suffix}`)) return `${base}-${suffix}`;
}

/** Questions as stored: each with its key (made from the label when the client gave none) and its required flag. */
function questionsOfInput(questions: CampaignQuestionInput[]): CampaignQuestionWire[] {
  const given = new Set(questions.flatMap((question) => (question.key ? [question.key] : [])));
  return questions.map((question) => {
    let key = question.key;
    if (!key) {
      const base = slugWords(question.label, "_", 40) || "question";
      key = base;
      for (let suffix = 2; given.has(key); suffix++) key = `${base}_${suffix}`;
      given.add(key);
    }
    return {
      key,
      type: question.type,
      label: question.label.trim() || question.label,
      required: question.required ?? false,
      ...(question.options !== undefined ? { options: question.options.map((option) => option.trim() || option) } : {}),
    };
  });
}

/** A request's fields as the campaign keeps them (questions with their keys). */
function storedFields<T extends CampaignInput | CampaignPatch>(input: T) {
  const { questions, ...rest } = input;
  return questions === undefined ? rest : { ...rest, questions: questionsOfInput(questions) };
}

function isSlugConflict(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string; constraint?: string } })?.cause ?? error;
  return (cause as { code?: string })?.code === "23505";
}

async function saving<T>(work: Promise<T>, slug: string | null): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isSlugConflict(error)) {
      throw new AppError("slug_taken", `Another campaign of this organization has the slug "${slug}"`, {
        errors: [fieldIssue("slug", fieldProblem("campaign_slug_taken"))],
      });
    }
    throw error;
  }
}

/** A new campaign; with an idempotency key, a retry with the same body answers the first outcome. */
export async function createCampaign(db: Db, scope: Scope, input: CampaignInput, idempotencyKey?: string) {
  const campaign: CampaignFields = { ...CAMPAIGN_DEFAULTS, ...storedFields(input) } as CampaignFields;
  await assertCampaignRules(db, scope, campaign);
  // A live campaign takes gifts at once: its form's consent box must link to the organization's privacy notice.
  if (!(await findLegalProfile(db, scope.organizationId))?.privacyPolicyUrl) {
    throw new AppError(
      "privacy_policy_required",
      "The organization has no privacy notice yet: set privacy_policy_url in its legal profile before publishing a campaign",
    );
  }
  const outcome = await withEvents(db, (tx) =>
    idempotent(tx, scope.organizationId, "campaigns:create", idempotencyKey, input, async () => {
      if (campaign.slug === null) campaign.slug = await freeSlug(tx, scope, campaign.title);
      const created = campaignToWire(await saving(insertCampaignRow(tx, scope, campaign), campaign.slug));
      await recordEvent(tx, scope, "campaign.created", created.id, created);
      return { status: 201, body: created };
    }),
  );
  return outcome.replayed ? { ...outcome, body: storedCampaignToWire(outcome.body) } : outcome;
}

/**
 * A campaign an imported gift names that the organization does not have yet (docs/import.md): made
 * as a draft with the name as its title, so the history keeps its grouping and nobody can give to it
 * until an admin publishes it. In the import's own transaction.
 */
export async function createImportedCampaign(tx: Executor, scope: Scope, title: string) {
  const campaign = { ...CAMPAIGN_DEFAULTS, title, status: "draft" } as CampaignFields;
  campaign.slug = await freeSlug(tx, scope, title);
  const row = await insertCampaignRow(tx, scope, campaign);
  await recordEvent(tx, scope, "campaign.created", row.id, campaignToWire(row));
  return row;
}

/** A campaign answered before its page content existed (an idempotent replay), with that content's defaults. */
export function storedCampaignToWire(stored: CampaignWire): CampaignWire {
  return {
    ...stored,
    story: stored.story ?? null,
    cover_image_url: stored.cover_image_url ?? null,
    status: stored.status ?? "published",
    start_date: stored.start_date ?? null,
    end_date: stored.end_date ?? null,
    ask_impacts: stored.ask_impacts ?? [],
    questions: stored.questions ?? [],
    allow_tribute: stored.allow_tribute ?? false,
  };
}

export async function updateCampaign(db: Db, scope: Scope, rawId: string, patch: CampaignPatch) {
  return withEvents(db, async (tx) => {
    const existing = await findCampaignRow(tx, scope, parseId(rawId, "Campaign"));
    if (!existing) throw notFound("Campaign");
    const campaign = { ...fieldsOf(existing), ...storedFields(patch) } as CampaignFields;
    await assertCampaignRules(tx, scope, campaign);
    const updated = campaignToWire(await saving(updateCampaignRow(tx, scope, existing.id, campaign), campaign.slug));
    await recordEvent(tx, scope, "campaign.updated", updated.id, updated, { before: campaignToWire(existing) });
    return updated;
  });
}

/** Archiving keeps the campaign and its history; it only stops it from taking new gifts. */
export async function archiveCampaign(db: Db, scope: Scope, rawId: string) {
  return withEvents(db, async (tx) => {
    const existing = await findCampaignRow(tx, scope, parseId(rawId, "Campaign"));
    if (!existing) throw notFound("Campaign");
    if (existing.archiveDate) return campaignToWire(existing);
    const archived = campaignToWire(await updateCampaignRow(tx, scope, existing.id, fieldsOf(existing), new Date()));
    await recordEvent(tx, scope, "campaign.updated", archived.id, archived, { before: campaignToWire(existing) });
    return archived;
  });
}

/**
 * Makes an uploaded image the campaign's cover: checked and resized before the transaction (widths
 * PURPOSES.cover), stored, named by its largest width's address, audited as `campaign.updated`.
 */
export async function uploadCampaignCover(
  db: Db,
  scope: Scope,
  rawId: string,
  upload: { bytes: Buffer; contentType: string },
  baseUrl: string,
) {
  const id = parseId(rawId, "Campaign");
  if (!(await findCampaignRow(db, scope, id))) throw notFound("Campaign");
  const prepared = await prepareImage(scope.organizationId, "cover", upload);
  return withEvents(db, async (tx) => {
    const existing = await findCampaignRow(tx, scope, id);
    if (!existing) throw notFound("Campaign");
    await saveImage(tx, prepared);
    const updated = campaignToWire(await updateCampaignCover(tx, scope, id, largestImageUrl(prepared, baseUrl)));
    await recordEvent(tx, scope, "campaign.updated", updated.id, updated, { before: campaignToWire(existing) });
    return updated;
  });
}

/** Takes the cover off the campaign's page (audited); the image itself stays stored, as a logo's does. */
export async function removeCampaignCover(db: Db, scope: Scope, rawId: string) {
  return withEvents(db, async (tx) => {
    const existing = await findCampaignRow(tx, scope, parseId(rawId, "Campaign"));
    if (!existing) throw notFound("Campaign");
    if (existing.coverImageUrl === null) return campaignToWire(existing);
    const updated = campaignToWire(await updateCampaignCover(tx, scope, existing.id, null));
    await recordEvent(tx, scope, "campaign.updated", updated.id, updated, { before: campaignToWire(existing) });
    return updated;
  });
}
