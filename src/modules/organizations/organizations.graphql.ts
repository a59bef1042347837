import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import {
  type bankTransferToWire,
  getOrganization,
  updateBankAccount,
  updateFeeFormula,
} from "./organizations.service.js";

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
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
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
