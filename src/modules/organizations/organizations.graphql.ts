import { requireRecentCheck } from "../../auth/step-up.js";
import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { MAX_EMBED_ORIGINS } from "./embed-origins.js";
import {
  type bankTransferToWire,
  getOrganization,
  ibanChanges,
  secondFactorRuleOn,
  updateBankAccount,
  updateEmbedOrigins,
  updateFeeFormula,
  updateSecondFactorRule,
} from "./organizations.service.js";
import { campaignSharing } from "./sharing.service.js";

type OrganizationWire = Awaited<ReturnType<typeof getOrganization>>;

const CoverFeeType = builder.objectRef<OrganizationWire["cover_fee"]>("CoverFeeFormula").implement({
  description:
    "The processing fee a donor may add to a gift: percent of the gift (rounded half up to the cent) + fixed",
  fields: (t) => ({
    percent: t.exposeFloat("percent", { description: "Default 2.9" }),
    fixed: t.exposeFloat("fixed", { description: "In the organization's currency; default 0.30" }),
  }),
});

const BankTransferType = builder
  .objectRef<NonNullable<ReturnType<typeof bankTransferToWire>>>("BankTransfer")
  .implement({
    description: "Where donors who choose bank transfer send the money",
    fields: (t) => ({
      account_name: t.exposeString("account_name", {
        description: "The account holder; the organization's name unless set",
      }),
      iban: t.exposeString("iban", { description: "Compact (no spaces), checksum-validated" }),
      bic: t.exposeString("bic", { nullable: true }),
    }),
  });

export const OrganizationType = builder.objectRef<OrganizationWire>("Organization").implement({
  description: "The organization the request acts for",
  fields: (t) => ({
    id: t.exposeInt("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    currency: t.exposeString("currency", { description: "ISO 4217 code of every amount" }),
    time_zone: t.exposeString("time_zone", { description: "IANA time zone of whole-day date filters" }),
    create_date: t.exposeString("create_date"),
    test_mode: t.exposeBoolean("test_mode", {
      description: "Test mode (Settings → Payments): the sandbox takes gifts, no real money moves; show a test banner",
    }),
    bank_transfer: t.field({
      type: BankTransferType,
      nullable: true,
      description: "Bank transfer instructions; null until an IBAN is entered",
      resolve: (organization) => organization.bank_transfer,
    }),
    cover_fee: t.field({
      type: CoverFeeType,
      description: "Used when a campaign has allow_cover_fee",
      resolve: (organization) => organization.cover_fee,
    }),
    embed_origins: t.exposeStringList("embed_origins", {
      description:
        "Sites (https://host[:port]) whose pages may embed the donation pages with embed.js; empty: none (docs/embed.md)",
    }),
    require_second_factor: t.exposeBoolean("require_second_factor", {
      description:
        "Owners and admins must sign in with a second factor; one without is asked to set it up at sign-in (docs/accounts.md)",
    }),
  }),
});

interface ViewerWire {
  kind: "application" | "member";
  email: string | null;
  role: string | null;
  application_id: number | null;
  permissions: string[];
}

const ViewerType = builder.objectRef<ViewerWire>("Viewer").implement({
  description: "Who is asking: a member signed in to the admin panel, or an installed application",
  fields: (t) => ({
    kind: t.exposeString("kind", { description: "member or application" }),
    email: t.exposeString("email", { nullable: true }),
    role: t.exposeString("role", { nullable: true, description: "owner, admin or member" }),
    application_id: t.exposeInt("application_id", { nullable: true }),
    permissions: t.exposeStringList("permissions", { description: "What an application was granted" }),
  }),
});

builder.queryField("organization", (t) =>
  t.field({
    type: OrganizationType,
    resolve: (_root, _args, context) => getOrganization(context.db, context.scope.organizationId),
  }),
);

builder.queryField("viewer", (t) =>
  t.field({
    type: ViewerType,
    resolve: (_root, _args, { actor }): ViewerWire =>
      actor.kind === "member"
        ? { kind: "member", email: actor.email, role: actor.role, application_id: null, permissions: [] }
        : {
            kind: "application",
            email: null,
            role: null,
            application_id: actor.applicationId,
            permissions: actor.permissions,
          },
  }),
);

builder.mutationField("updateOrganizationBankTransfer", (t) =>
  t.field({
    type: OrganizationType,
    description:
      "Sets the bank transfer instructions (IBAN checked by its country length and mod-97 checksum, BIC by format); " +
      "all blank clears them. Owners and admins only.",
    args: {
      account_name: t.arg.string({ description: "The account holder; defaults to the organization's name" }),
      iban: t.arg.string(),
      bic: t.arg.string(),
    },
    resolve: async (_root, args, context) => {
      authorize(context, "organization:manage");
      // New payout details: the member confirms it is them (step-up) when their last check is old.
      if (await ibanChanges(context.db, context.scope.organizationId, args.iban)) requireRecentCheck(context.actor);
      return updateBankAccount(context.db, context.scope.organizationId, args, context.scope.origin);
    },
  }),
);

builder.mutationField("updateOrganizationCoverFee", (t) =>
  t.field({
    type: OrganizationType,
    description: "Sets the fee formula of cover-the-fee gifts (percent 0–20, fixed 0–100). Owners and admins only.",
    args: { percent: t.arg.float({ required: true }), fixed: t.arg.float({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return updateFeeFormula(context.db, context.scope.organizationId, args, context.scope.origin);
    },
  }),
);

builder.mutationField("updateOrganizationEmbedOrigins", (t) =>
  t.field({
    type: OrganizationType,
    description:
      `Replaces the sites allowed to embed the donation pages: at most ${MAX_EMBED_ORIGINS} origins, each https://host[:port] ` +
      "(http:// only for localhost and 127.0.0.1), no path, no wildcard, no duplicate; problems by field (origins.N). " +
      "An empty list allows none. Owners and admins only.",
    args: { origins: t.arg.stringList({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return updateEmbedOrigins(context.db, context.scope.organizationId, args.origins, context.scope.origin);
    },
  }),
);

builder.mutationField("updateOrganizationSecondFactorRule", (t) =>
  t.field({
    type: OrganizationType,
    description:
      "Requires (or no longer requires) a second factor of the organization's owners and admins at sign-in. " +
      "Owners only; turning it on takes a second factor of your own (409 second_factor_required).",
    args: { require_second_factor: t.arg.boolean({ required: true }) },
    resolve: async (_root, args, context) => {
      authorize(context, "organization:manage");
      // Turning the rule off lowers every owner's and admin's guard: a recent check of who asks (step-up).
      if (!args.require_second_factor && (await secondFactorRuleOn(context.db, context.scope.organizationId))) {
        requireRecentCheck(context.actor);
      }
      return updateSecondFactorRule(
        context.db,
        context.actor,
        context.scope.organizationId,
        args.require_second_factor,
        context.scope.origin,
      );
    },
  }),
);

const CampaignSharingType = builder
  .objectRef<NonNullable<Awaited<ReturnType<typeof campaignSharing>>>>("CampaignSharing")
  .implement({
    description: "How a campaign's donation page is shared: its address, a QR code of it, the embed snippet",
    fields: (t) => ({
      url: t.exposeString("url", { description: "The donation page's address" }),
      qr_svg: t.exposeString("qr_svg", { description: "A QR code of the address, as an SVG document" }),
      embed_snippet: t.exposeString("embed_snippet", {
        description: "The <script> tag that puts a Donate button on another site (docs/embed.md)",
      }),
    }),
  });

builder.queryField("campaignSharing", (t) =>
  t.field({
    type: CampaignSharingType,
    nullable: true,
    description: "The campaign's donation page address, QR code and embed snippet; null while it has no slug",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "campaigns:read");
      return campaignSharing(context.db, context.scope, String(args.id), context.config.baseUrl);
    },
  }),
);
