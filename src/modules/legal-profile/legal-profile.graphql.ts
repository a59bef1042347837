import { requireRecentCheck } from "../../auth/step-up.js";
import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { ibanChanges } from "../organizations/organizations.service.js";
import {
  ETS_STATUSES,
  type LegalProfileInput,
  type LegalProfileWire,
  RECEIPT_MODES,
  readLegalProfile,
  updateLegalProfile,
} from "./legal-profile.service.js";

const TEXT = {
  legal_name: "The organization's registered name, as receipts print it",
  legal_form: "Associazione, fondazione, 501(c)(3) nonprofit corporation…",
  address_line1: "The registered seat (sede legale)",
  address_line2: null,
  postal_code: null,
  city: null,
  province: "Italy: the two-letter province (MI, RM…)",
  country: "ISO 3166-1 alpha-2 (IT, US…): decides the receipt's wording",
  tax_code: "Italy: codice fiscale (11 digits, or 16 characters), checked",
  vat_number: "Italy: partita IVA (11 digits), checked",
  runts_number: "Italy: the RUNTS registration number",
  ets_status: `Italy: ${ETS_STATUSES.join(", ")} (ente del Terzo settore, ODV, APS, ONLUS)`,
  charity_number: "A charity registration number (e.g. England and Wales)",
  ein: "US: Employer Identification Number, 12-3456789",
  website: null,
  privacy_policy_url: "The privacy notice the donation form's consent box links to",
  receipt_legal_text: "The organization's own words printed on every receipt, after the law's",
  receipt_mode: `${RECEIPT_MODES.join(" or ")}: a receipt per paid payment, or one statement per donor and year`,
  default_locale: "The organization's language, when a reader states none (en, it)",
  contact_email: "Reply-To of every email; printed on receipts",
  account_holder: "Bank transfers: the account holder (the organization's name unless set)",
  iban: "Bank transfers: checked by its country length and mod-97 checksum",
  bic: null,
} as const;

const LegalProfileType = builder.objectRef<LegalProfileWire>("LegalProfile").implement({
  description: "The organization's legal identity: what its receipts print to count for a donor's taxes",
  fields: (t) => ({
    ...Object.fromEntries(
      Object.entries(TEXT).map(([field, description]) => [
        field,
        field === "receipt_mode" || field === "default_locale"
          ? t.exposeString(field, description ? { description } : {})
          : t.exposeString(field as "legal_name", { nullable: true, ...(description ? { description } : {}) }),
      ]),
    ),
    us_501c3: t.exposeBoolean("us_501c3", { description: "US: recognized as a 501(c)(3) public charity" }),
    logo_url: t.exposeString("logo_url", {
      nullable: true,
      description:
        "The logo on pages, emails and receipts: uploaded in the panel (PUT /admin/organization/logo), or an address set in the email settings",
    }),
    missing: t.exposeStringList("missing", {
      description: "What a valid receipt needs and the profile lacks (field names); empty when complete",
    }),
  }),
});

const LegalProfileInputType = builder.inputType("LegalProfileInput", {
  description: "Fields left out stay as they are; blank or null clears one",
  fields: (t) => ({
    ...Object.fromEntries(
      Object.entries(TEXT).map(([field, description]) => [field, t.string(description ? { description } : {})]),
    ),
    us_501c3: t.boolean(),
  }),
});

builder.queryFields((t) => ({
  legalProfile: t.field({
    type: LegalProfileType,
    description: "The organization's legal profile (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "organization:read");
      return readLegalProfile(context.db, context.scope.organizationId);
    },
  }),
}));

builder.mutationFields((t) => ({
  updateLegalProfile: t.field({
    type: LegalProfileType,
    description:
      "Saves the legal profile (every field checked, problems by field); audited as legal_profile.updated. " +
      "Receipts already issued keep the profile they were issued with. Owners and admins only.",
    args: { input: t.arg({ type: LegalProfileInputType, required: true }) },
    resolve: async (_root, { input }, context) => {
      authorize(context, "organization:manage");
      // New payout details: the member confirms it is them (step-up) when their last check is old.
      const iban = (input as LegalProfileInput).iban;
      if (await ibanChanges(context.db, context.scope.organizationId, iban)) requireRecentCheck(context.actor);
      return updateLegalProfile(
        context.db,
        context.scope.organizationId,
        input as LegalProfileInput,
        context.scope.origin,
      );
    },
  }),
}));
