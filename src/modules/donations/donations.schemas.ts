import { type Static, Type } from "typebox";
import { ExternalId, ExternalIdFilter } from "../../http/external-id.js";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { DateTime, Frequency, Id, Money, nullable, Tags, wireObject } from "../../http/schema-types.js";
import { DonationAnswer, Tribute } from "../campaigns/campaign-questions.js";
import { DOCUMENT_LINK_NOTE } from "../documents/document-access.js";

export const DONATION_STATES = ["draft", "pending", "active", "past_due", "done", "revoked"] as const;
/** Where an imported recurring gift stands before an admin turns it on (docs/import.md). */
export const DONATION_ACTIVATIONS = ["awaiting", "card_requested"] as const;

export const Donation = wireObject(
  {
    id: Id,
    supporter_id: Id,
    campaign_id: Id,
    code: Type.String(),
    state: Type.String({ enum: [...DONATION_STATES] }),
    amount: Money,
    covered_fee: {
      ...Money,
      description: "The processing fee the donor added (0 when none): each payment charges amount + covered_fee",
    },
    currency: Type.String({ description: "ISO 4217 code" }),
    receipt_url: nullable(
      Type.String({
        format: "uri",
        description: `The printable receipt (it shows the donor's name and address): ${DOCUMENT_LINK_NOTE}`,
      }),
    ),
    frequency: nullable(Frequency),
    note: nullable(Type.String()),
    completed_date: nullable(DateTime),
    create_date: DateTime,
    update_date: DateTime,
    device: nullable(Type.String({ enum: ["desktop", "mobile", "tablet"] })),
    tags: Tags,
    skipped_cycles: Type.Array(Type.Integer({ minimum: 1 }), {
      description:
        "Billing cycles of a recurring gift that were never charged: after an outage the first renewal " +
        "charges once and the schedule resumes at the next cycle ahead (docs/giving.md)",
    }),
    test: Type.Boolean({
      description:
        "Test data: a gift made with the sandbox while the organization was in test mode (no real money moved); its payments are test payments",
    }),
    tribute: nullable(Tribute),
    answers: Type.Array(DonationAnswer, {
      description:
        "The donor's answers to the campaign's questions, each with the question as it was asked (empty: none)",
    }),
    external_id: nullable(ExternalId("donation")),
    activation: nullable(
      Type.String({
        enum: [...DONATION_ACTIVATIONS],
        description:
          "An imported recurring gift charges nobody until an admin turns it on: awaiting until then, " +
          "card_requested once its donor was sent a link to set up a card; null for every other gift. Read-only",
      }),
    ),
  },
  "A gift, one-off or recurring",
);
export type DonationWire = Static<typeof Donation>;

export const DONATION_ORDER_FIELDS = [
  "id",
  "supporter_id",
  "campaign_id",
  "code",
  "state",
  "amount",
  "currency",
  "frequency",
  "note",
  "completed_date",
  "create_date",
  "update_date",
  "device",
  "external_id",
  "activation",
] as const;

export const DonationListQuery = listQuerySchema(DONATION_ORDER_FIELDS, {
  q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of the donation code" })),
  state: Type.Optional(Type.String({ enum: [...DONATION_STATES] })),
  frequency: Type.Optional(Frequency),
  campaign_id: Type.Optional(Id),
  supporter_id: Type.Optional(Id),
  tag: Type.Optional(Type.String({ maxLength: 100 })),
  external_id: Type.Optional(ExternalIdFilter),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
  completed_date_from: Type.Optional(DateFilter),
  completed_date_to: Type.Optional(DateFilter),
});
export type DonationListQuery = Static<typeof DonationListQuery>;

export const DonationList = listResponseSchema(Donation, "donations");
