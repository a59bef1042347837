import type { TObject, TSchema } from "typebox";
import { parseDateBound } from "../../db/list-query.js";
import type { ValidationIssue } from "../../errors/app-error.js";
import { WIRE_INTEGER } from "../../http/wire-validator.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { CampaignListQuery } from "../campaigns/campaigns.schemas.js";
import { CheckoutListQuery } from "../checkouts/checkouts.schemas.js";
import { DonationListQuery } from "../donations/donations.schemas.js";
import { PaymentListQuery } from "../payments/payments.schemas.js";
import { SupporterListQuery } from "../supporters/supporters.schemas.js";

/**
 * The filters of each collection's table, as the panel puts them in its URL
 * (web/admin/src/pages/collections.tsx): what a segment may keep. Their types and bounds are the
 * list's own (the same query schema the API, GraphQL and the CSV export check them with).
 */
export const SEGMENT_FILTERS = {
  campaigns: {
    query: CampaignListQuery,
    names: ["q", "type", "tag", "archived", "create_date_from", "create_date_to"],
  },
  supporters: {
    query: SupporterListQuery,
    names: ["q", "email", "country", "tag", "create_date_from", "create_date_to"],
  },
  donations: {
    query: DonationListQuery,
    names: [
      "q",
      "state",
      "frequency",
      "campaign_id",
      "supporter_id",
      "tag",
      "create_date_from",
      "create_date_to",
      "completed_date_from",
      "completed_date_to",
    ],
  },
  payments: {
    query: PaymentListQuery,
    names: [
      "state",
      "donation_id",
      "processor_intent_id",
      "payment_date_from",
      "payment_date_to",
      "create_date_from",
      "create_date_to",
    ],
  },
  checkouts: {
    query: CheckoutListQuery,
    names: ["q", "state", "frequency", "campaign_id", "supporter_id", "create_date_from", "create_date_to"],
  },
} as const satisfies Record<string, { query: TSchema; names: readonly string[] }>;

export type SegmentCollection = keyof typeof SEGMENT_FILTERS;
export const SEGMENT_COLLECTIONS = Object.keys(SEGMENT_FILTERS) as SegmentCollection[];

export const isSegmentCollection = (value: string): value is SegmentCollection => Object.hasOwn(SEGMENT_FILTERS, value);

export interface SegmentFilter {
  name: string;
  value: string;
}

interface FilterSchema {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

const isDateFilter = (name: string) => /_date_(from|to)$/.test(name);

/** What is wrong with a value the URL would carry for this filter, or null when the list takes it. */
function valueProblem(name: string, value: string, schema: FilterSchema): FieldProblem | null {
  if (value.trim() === "") return fieldProblem("required");
  const choices = schema.enum?.map(String);
  if (schema.type === "boolean") {
    return value === "true" || value === "false" ? null : fieldProblem("one_of", { choices: "true, false" });
  }
  if (schema.type === "integer") {
    const number = WIRE_INTEGER.test(value) ? Number(value) : Number.NaN;
    if (choices)
      return choices.includes(String(number)) ? null : fieldProblem("one_of", { choices: choices.join(", ") });
    const min = schema.minimum ?? 0;
    const inRange = Number.isSafeInteger(number) && number >= min && number <= (schema.maximum ?? Infinity);
    return inRange ? null : fieldProblem("whole_number_from", { min });
  }
  if (choices) return choices.includes(value) ? null : fieldProblem("one_of", { choices: choices.join(", ") });
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    return fieldProblem("too_long", { max: schema.maxLength });
  }
  if (isDateFilter(name)) {
    try {
      parseDateBound(name, value);
    } catch {
      return fieldProblem("date_or_date_time");
    }
  }
  return null;
}

/**
 * The filters of a segment checked against its collection's table: each a known filter, once, with
 * a value its list takes. Answers them as the URL carries them ({ name: value }), or the issues, each
 * naming its entry (`filters.0.name`, `filters.1.value`).
 */
export function checkSegmentFilters(
  collection: SegmentCollection,
  filters: readonly SegmentFilter[],
): { filters: Record<string, string>; issues: ValidationIssue[] } {
  const { query, names } = SEGMENT_FILTERS[collection];
  const known: readonly string[] = names;
  const schemas = (query as unknown as TObject).properties as Record<string, FilterSchema>;
  const checked: Record<string, string> = {};
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  if (filters.length === 0) issues.push(fieldIssue("filters", fieldProblem("segment_filters_empty")));
  filters.forEach(({ name, value }, index) => {
    if (!known.includes(name)) {
      issues.push(
        fieldIssue(`filters.${index}.name`, fieldProblem("segment_filter_unknown", { name, names: known.join(", ") })),
      );
    } else if (seen.has(name)) {
      issues.push(fieldIssue(`filters.${index}.name`, fieldProblem("segment_filter_repeated", { name })));
    } else {
      seen.add(name);
      const problem = valueProblem(name, value, schemas[name] ?? {});
      if (problem) issues.push(fieldIssue(`filters.${index}.value`, problem));
      else checked[name] = value;
    }
  });
  return { filters: checked, issues };
}

/** A segment's filters in the order its table shows them. */
export function segmentFiltersOf(collection: string, filters: Record<string, string>): SegmentFilter[] {
  const order: readonly string[] = isSegmentCollection(collection) ? SEGMENT_FILTERS[collection].names : [];
  return Object.entries(filters)
    .map(([name, value]) => ({ name, value }))
    .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
}
