import DataLoader from "dataloader";
import { AppError } from "../../errors/app-error.js";
import { builder } from "../../graphql/builder.js";
import { authorize, type GraphQLContext } from "../../graphql/context.js";
import { CampaignType } from "../campaigns/campaigns.graphql.js";
import {
  type CampaignRaisedWire,
  type CampaignTotal,
  campaignsRaised,
  type DashboardPoint,
  type DashboardWire,
  dashboard,
  type RaisedWire,
  type RecurringPoint,
} from "./dashboard.service.js";

const raisedFields = {
  all_time: "Raised since the first gift",
  this_year: "Raised this calendar year (the organization's time zone)",
  this_month: "Raised this calendar month (the organization's time zone)",
} as const;

const RaisedType = builder.objectRef<RaisedWire>("Raised").implement({
  description:
    "Money raised: PAID payments less refunds and lost disputes, test payments left out (one definition for the " +
    "donation page, the campaign page and the dashboard)",
  fields: (t) => ({
    all_time: t.exposeFloat("all_time", { description: raisedFields.all_time }),
    this_year: t.exposeFloat("this_year", { description: raisedFields.this_year }),
    this_month: t.exposeFloat("this_month", { description: raisedFields.this_month }),
  }),
});

const CampaignRaisedType = builder.objectRef<CampaignRaisedWire>("CampaignRaised").implement({
  description: "What a campaign raised (see Raised), and from how many donors",
  fields: (t) => ({
    all_time: t.exposeFloat("all_time", { description: raisedFields.all_time }),
    this_year: t.exposeFloat("this_year", { description: raisedFields.this_year }),
    this_month: t.exposeFloat("this_month", { description: raisedFields.this_month }),
    donors: t.exposeInt("donors", { description: "Supporters with at least one payment counted" }),
  }),
});

// One query per request for every campaign whose raised figures are asked.
const raisedLoaders = new WeakMap<GraphQLContext, DataLoader<number, CampaignRaisedWire>>();
function campaignRaised(context: GraphQLContext, id: number) {
  let loader = raisedLoaders.get(context);
  if (!loader) {
    loader = new DataLoader((ids) => campaignsRaised(context.db, context.scope, ids));
    raisedLoaders.set(context, loader);
  }
  return loader.load(id);
}

builder.objectFields(CampaignType, (t) => ({
  raised: t.field({
    type: CampaignRaisedType,
    // Nullable: without donations:read the field is refused, not the campaign (or its whole list).
    nullable: true,
    description: "What the campaign raised (needs donations:read; null with an error otherwise)",
    resolve: (campaign, _args, context) => {
      authorize(context, "donations:read");
      return campaignRaised(context, campaign.id);
    },
  }),
}));

const PointType = builder.objectRef<DashboardPoint>("DashboardPoint").implement({
  description: "Money raised (PAID payments) in one month of the organization's time zone",
  fields: (t) => ({
    period: t.exposeString("period", { description: "YYYY-MM" }),
    amount: t.exposeFloat("amount"),
    count: t.exposeInt("count", { description: "Number of payments" }),
  }),
});

const RecurringPointType = builder.objectRef<RecurringPoint>("RecurringPoint").implement({
  description: "PAID payments of recurring donations in one month, monthly and yearly gifts apart",
  fields: (t) => ({
    period: t.exposeString("period", { description: "YYYY-MM" }),
    monthly: t.exposeFloat("monthly"),
    yearly: t.exposeFloat("yearly"),
  }),
});

const CampaignTotalType = builder.objectRef<CampaignTotal>("CampaignTotal").implement({
  fields: (t) => ({
    campaign: t.field({
      type: CampaignType,
      resolve: async (parent, _args, context) => {
        const campaign = await context.loaders.campaign.load(parent.campaign_id);
        if (!campaign) throw new AppError("not_found", "Campaign not found");
        return campaign;
      },
    }),
    raised: t.exposeFloat("raised"),
    donations: t.exposeInt("donations"),
  }),
});

const DashboardType = builder.objectRef<DashboardWire>("Dashboard").implement({
  description: "The organization's figures for the admin panel",
  fields: (t) => ({
    currency: t.exposeString("currency"),
    time_zone: t.exposeString("time_zone"),
    raised_this_month: t.exposeFloat("raised_this_month"),
    raised_this_year: t.exposeFloat("raised_this_year"),
    raised: t.field({ type: RaisedType, resolve: (parent) => parent.raised }),
    donations_over_time: t.field({
      type: [PointType],
      description: "One point per month, oldest first",
      resolve: (parent) => parent.donations_over_time,
    }),
    recurring_revenue: t.field({
      type: [RecurringPointType],
      description: "One point per month, oldest first",
      resolve: (parent) => parent.recurring_revenue,
    }),
    active_monthly_amount: t.exposeFloat("active_monthly_amount", {
      description: "Sum of the amounts of active monthly donations",
    }),
    active_yearly_amount: t.exposeFloat("active_yearly_amount", {
      description: "Sum of the amounts of active yearly donations",
    }),
    top_campaigns: t.field({
      type: [CampaignTotalType],
      description: "The five campaigns that raised the most this year",
      resolve: (parent) => parent.top_campaigns,
    }),
  }),
});

builder.queryFields((t) => ({
  dashboard: t.field({
    type: DashboardType,
    args: { months: t.arg.int({ defaultValue: 12, description: "Months of history, 1 to 36" }) },
    resolve: async (_root, { months }, context) => {
      authorize(context, "donations:read");
      const span = months ?? 12;
      if (!Number.isInteger(span) || span < 1 || span > 36) {
        throw new AppError("invalid_request", 'Invalid argument "months": must be 1 to 36', {
          errors: [{ parameter: "months", message: "must be 1 to 36" }],
        });
      }
      return dashboard(context.db, context.scope, span);
    },
  }),
}));
