import { type Static, Type } from "typebox";
import { DateTime, Frequency, Id, Money, nullable, wireObject } from "../../http/schema-types.js";
import {
  AnswersInput,
  type AnswersInput as AnswersInputWire,
  AskImpact,
  CampaignQuestion,
  TributeInput,
  type TributeInput as TributeInputWire,
} from "../campaigns/campaign-questions.js";
import { SUPPORTER_FORM_FIELDS } from "../campaigns/campaigns.schemas.js";
import { Donation } from "../donations/donations.schemas.js";
import { Payment } from "../payments/payments.schemas.js";
import { CONSENT_NAMES } from "../supporters/supporters.schemas.js";

const Amount = Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000, description: "At most 2 decimals" });
const ShortText = (maxLength = 200) => Type.String({ maxLength });

/** Card-testing defence: whether completing needs a solved ALTCHA challenge right now. */
const challengeFields = {
  challenge_required: Type.Boolean({
    description: "true while the form is protected: completing needs `altcha`, a solved challenge from challenge_url",
  }),
  challenge_url: Type.String({ description: "GET it for a fresh proof-of-work challenge (ALTCHA)" }),
};

export const PublicCampaign = wireObject(
  {
    id: Id,
    title: Type.String(),
    slug: Type.String(),
    organization: wireObject({
      slug: Type.String(),
      name: Type.String(),
      locale: Type.String({
        description: "The organization's default language (en, it): the page's when the donor states none",
      }),
      privacy_policy_url: nullable(
        Type.String({ description: "The organization's privacy notice, which the form's consent box links to" }),
      ),
      logo_url: nullable(Type.String({ description: "The organization's logo (an image address), if it has one" })),
      time_zone: Type.String({ description: "The organization's time zone (IANA): the page states dates in it" }),
    }),
    story: nullable(Type.String({ description: "The campaign's story in Markdown (raw HTML is not rendered)" })),
    cover_image_url: nullable(Type.String({ description: "The cover image's address (its largest width)" })),
    start_date: nullable({ ...DateTime, description: "Gifts are taken from then on (null: already)" }),
    end_date: nullable({ ...DateTime, description: "Gifts are taken until then (null: no end)" }),
    is_open: Type.Boolean({
      description:
        "false before start_date or from end_date on: the page shows the campaign, and checkouts answer 410 campaign_closed",
    }),
    ask_impacts: Type.Array(AskImpact, { description: "What some suggested amounts make possible" }),
    currency: Type.String(),
    goal: nullable(Money),
    is_goal_enabled: Type.Boolean(),
    raised: Money,
    has_one_off: Type.Boolean(),
    has_subscription: Type.Boolean(),
    allow_custom_amount: Type.Boolean(),
    allow_custom_subscription_amount: Type.Boolean(),
    default_amount: nullable(Money),
    default_subscription_amount: nullable(Money),
    min_amount: nullable(Money),
    max_amount: nullable(Money),
    min_subscription_amount: nullable(Money),
    max_subscription_amount: nullable(Money),
    asks: Type.Array(Money),
    asks_subscription: Type.Array(Money),
    shown_fields: Type.Array(Type.String()),
    required_fields: Type.Array(Type.String()),
    privacy_note: nullable(Type.String()),
    cost_example_amount: nullable(Money),
    cost_example_label: nullable(Type.String()),
    cover_fee: nullable(
      wireObject(
        { percent: Type.Number(), fixed: Money },
        "Offered when not null: the donor may add percent of the gift (rounded half up to the cent) + fixed",
      ),
    ),
    processors: Type.Array(
      wireObject({ name: Type.String(), title: Type.String(), one_off: Type.Boolean(), recurring: Type.Boolean() }),
    ),
    stripe: nullable(
      wireObject(
        {
          publishable_key: Type.String({ description: "For Stripe.js: `Stripe(publishable_key)`" }),
          test_mode: Type.Boolean({ description: "Test-mode keys: show a test mode banner, no real money moves" }),
        },
        "Not null when the organization takes payments with Stripe (processor `stripe`): pay with Stripe's Payment Element",
      ),
    ),
    test_mode: Type.Boolean({
      description:
        "The organization is in test mode: the sandbox takes gifts (test card numbers), no real money moves, " +
        "and the page shows a test banner",
    }),
    allow_tribute: Type.Boolean({
      description: "The form offers to make the gift in honour or in memory of someone (`tribute` on completion)",
    }),
    questions: Type.Array(CampaignQuestion, {
      description: "The campaign's own questions, in the form's order; answers go in `answers` on completion",
    }),
    ...challengeFields,
  },
  "What a donation form needs to know about a campaign",
);
export type PublicCampaignWire = Static<typeof PublicCampaign>;

export const CheckoutStartBody = Type.Object(
  {
    amount: Type.Optional(nullable(Amount)),
    frequency: Type.Optional(Frequency),
  },
  { additionalProperties: false },
);
export type CheckoutStartBody = Static<typeof CheckoutStartBody>;

export const CheckoutStarted = wireObject(
  {
    id: Id,
    client_secret: Type.String({ description: "Give it back to complete this checkout; shown once" }),
    state: Type.String({ enum: ["OPEN", "CLOSED"] }),
    amount: nullable(Money),
    frequency: nullable(Frequency),
    cost_example_quantity: Type.Integer(),
    expires_date: DateTime,
    ...challengeFields,
  },
  "An open checkout, ready to be completed by the donor",
);

const supporterFields = Object.fromEntries(
  SUPPORTER_FORM_FIELDS.map((field) => {
    if (field === "email") return [field, Type.Optional(Type.String({ format: "email", maxLength: 254 }))];
    if (field === "sex") return [field, Type.Optional(Type.String({ enum: ["MALE", "FEMALE"] }))];
    if (field === "date_of_birth") return [field, Type.Optional(Type.String({ format: "date" }))];
    if (field === "note") return [field, Type.Optional(ShortText(2000))];
    return [field, Type.Optional(ShortText())];
  }),
);

export const CONSENTS = CONSENT_NAMES;

export const CheckoutCompleteBody = Type.Object(
  {
    client_secret: Type.String({ minLength: 1, maxLength: 200 }),
    amount: Amount,
    frequency: Frequency,
    processor: Type.String({ enum: ["sandbox", "stripe", "manual"] }),
    cover_fee: Type.Optional(
      Type.Boolean({ description: "Add the estimated processing fee (computed by the server) to the charge" }),
    ),
    card: Type.Optional(
      Type.Object(
        {
          number: Type.String({ maxLength: 32 }),
          exp_month: Type.Integer(),
          exp_year: Type.Integer(),
          cvc: Type.String({ maxLength: 4 }),
        },
        { additionalProperties: false },
      ),
    ),
    confirmation_token: Type.Optional(
      Type.String({
        maxLength: 255,
        description:
          "processor `stripe`: the ConfirmationToken (ctoken_…) made by Stripe.js `stripe.createConfirmationToken({ elements })`; " +
          "card numbers and IBANs never reach Donata",
      }),
    ),
    supporter: Type.Object(supporterFields, { additionalProperties: false }),
    consents: Type.Optional(
      Type.Object(Object.fromEntries(CONSENTS.map((name) => [name, Type.Optional(Type.Boolean())])), {
        additionalProperties: false,
      }),
    ),
    altcha: Type.Optional(
      Type.String({
        maxLength: 8192,
        description: "The ALTCHA widget's payload (a solved challenge); required while challenge_required",
      }),
    ),
    tribute: Type.Optional(TributeInput),
    answers: Type.Optional(AnswersInput),
  },
  { additionalProperties: false },
);

export interface CheckoutCompleteInput {
  client_secret: string;
  amount: number;
  frequency: 0 | 1 | 12;
  processor: string;
  cover_fee?: boolean;
  card?: { number: string; exp_month: number; exp_year: number; cvc: string };
  confirmation_token?: string;
  supporter: Partial<Record<(typeof SUPPORTER_FORM_FIELDS)[number], string>>;
  consents?: Partial<Record<(typeof CONSENTS)[number], boolean>>;
  altcha?: string;
  tribute?: TributeInputWire;
  answers?: AnswersInputWire;
}

export const CheckoutCompleted = wireObject(
  {
    result: Type.String({
      enum: ["succeeded", "pending"],
      description: "pending: a bank transfer awaits the money, or a SEPA Direct Debit is processing (see `processing`)",
    }),
    processing: Type.Optional(
      Type.Boolean({
        description:
          "true while the processor is still collecting the payment (a SEPA Direct Debit takes a few business days): " +
          "the gift is recorded and its payment PENDING; it settles by itself",
      }),
    ),
    checkout_id: Id,
    donation: Donation,
    payment: Payment,
    receipt_url: nullable(Type.String({ format: "uri" })),
    // Optional only so outcomes stored before it existed still replay.
    bank_transfer: Type.Optional(
      nullable(
        wireObject(
          {
            account_name: Type.String(),
            iban: Type.String({ description: "Compact; print it in groups of four" }),
            bic: nullable(Type.String()),
            reference: Type.String({ description: "Quote it on the transfer: the donation's code" }),
          },
          "Where to send a bank transfer gift; null for other processors and while the organization has no IBAN",
        ),
      ),
    ),
  },
  "The outcome of a completed checkout",
);
export type CheckoutCompletedWire = Static<typeof CheckoutCompleted>;

export const CheckoutRequiresAction = wireObject(
  {
    result: Type.String({ enum: ["requires_action"] }),
    checkout_id: Id,
    client_secret: Type.String({
      description:
        "The PaymentIntent's client secret: run `stripe.handleNextAction({ clientSecret })` (3-D Secure), then send " +
        "the same completion again with the same Idempotency-Key to learn the outcome",
    }),
  },
  "The donor must authenticate the payment (3-D Secure) before it can complete; nothing is settled yet",
);
export type CheckoutRequiresActionWire = Static<typeof CheckoutRequiresAction>;
