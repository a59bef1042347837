import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { SEGMENTS, type Segment } from "./retention.repo.js";
import {
  MAX_PAGE,
  type RetentionReport,
  type RetentionSupporter,
  retentionPage,
  retentionReport,
  retentionSegment,
  retentionYear,
} from "./retention.service.js";

const minorUnits = "in the organization's currency, a whole number of its ISO 4217 minor units (cents for EUR)";

const RetentionSupporterType = builder.objectRef<RetentionSupporter>("RetentionSupporter").implement({
  description: "A supporter in a retention list, with their gifts up to the end of the year asked",
  fields: (t) => ({
    id: t.exposeInt("id", { description: "The supporter's id" }),
    name: t.exposeString("name", { nullable: true, description: "First and last name, else the business name" }),
    email: t.exposeString("email", { nullable: true }),
    first_gift_date: t.exposeString("first_gift_date", { description: "ISO 8601" }),
    last_gift_date: t.exposeString("last_gift_date", { description: "ISO 8601; gifts after the year are left out" }),
    last_year_total: t.exposeFloat("last_year_total", { description: `Given in the year before, ${minorUnits}` }),
    lifetime_total: t.exposeFloat("lifetime_total", {
      description: `Given up to the end of the year, ${minorUnits}`,
    }),
  }),
});

const RetentionListType = builder.objectRef<{ items: RetentionSupporter[]; count: number }>("RetentionList").implement({
  description: "A page of a retention list and how many supporters it holds",
  fields: (t) => ({
    items: t.field({ type: [RetentionSupporterType], resolve: (page) => page.items }),
    count: t.exposeInt("count", { description: "Total number of supporters ignoring limit and offset" }),
  }),
});

const RetentionRateType = builder.objectRef<RetentionReport["rate"]>("RetentionRate").implement({
  description: "The share of last year's donors who gave again in the year",
  fields: (t) => ({
    rate: t.exposeFloat("rate", {
      nullable: true,
      description: "retained / last_year_donors, 0 to 1; null without any",
    }),
    retained: t.exposeInt("retained", { description: "Donors of the year before who gave in the year too" }),
    last_year_donors: t.exposeInt("last_year_donors", { description: "Donors of the year before" }),
  }),
});

const segmentDescriptions: Record<Segment, string> = {
  lybunt: "Gave last year but not this year (LYBUNT)",
  sybunt: "Gave in some year before last year, but neither last year nor this year (SYBUNT)",
  first_time: "Gave for the first time this year",
};

const RetentionType = builder.objectRef<RetentionReport>("Retention").implement({
  description:
    "Donor retention in a calendar year of the organization's time zone; a gift is a payment counted as raised " +
    "(PAID, not a test, not refunded or lost in a dispute in full)",
  fields: (t) => ({
    year: t.exposeInt("year"),
    currency: t.exposeString("currency"),
    minor_unit_exponent: t.exposeInt("minor_unit_exponent", { description: "Decimals of the currency's minor unit" }),
    time_zone: t.exposeString("time_zone"),
    rate: t.field({ type: RetentionRateType, resolve: (report) => report.rate }),
    ...Object.fromEntries(
      SEGMENTS.map((segment) => [
        segment,
        t.field({
          type: RetentionListType,
          description: `${segmentDescriptions[segment]}, the latest giver first`,
          args: {
            limit: t.arg.int({ defaultValue: 100, description: `Page size, 1 to ${MAX_PAGE}` }),
            offset: t.arg.int({ defaultValue: 0 }),
          },
          resolve: async (report, args, context) => ({
            count: report.counts[segment],
            items: await retentionSegment(
              context.db,
              context.scope,
              report.year,
              segment,
              retentionPage(args.limit, args.offset),
            ),
          }),
        }),
      ]),
    ),
  }),
});

builder.queryFields((t) => ({
  retention: t.field({
    type: RetentionType,
    description:
      "Donor retention in a year: lapsed and new donors and the retention rate (needs supporters:read and donations:read)",
    args: {
      year: t.arg.int({
        description: "Calendar year, 1900 to 9999; this year of the organization's time zone by default",
      }),
    },
    resolve: (_root, { year }, context) => {
      authorize(context, "supporters:read");
      authorize(context, "donations:read");
      return retentionReport(context.db, context.scope, retentionYear(context.scope, year));
    },
  }),
}));
