import { type Static, Type } from "typebox";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { DateTime, Frequency, Id, Money, nullable, wireObject } from "../../http/schema-types.js";
import { Campaign } from "../campaigns/campaigns.schemas.js";
import { Donation } from "../donations/donations.schemas.js";
import { Payment } from "../payments/payments.schemas.js";
import { Supporter } from "../supporters/supporters.schemas.js";

export const CHECKOUT_STATES = ["OPEN", "CLOSED"] as const;

export const Checkout = wireObject(
  {
    id: Id,
    create_date: DateTime,
    update_date: DateTime,
    campaign: nullable(Campaign),
    supporter: nullable(Supporter),
    donation: nullable(Donation),
    payment: nullable(Payment),
    state: Type.String({ enum: [...CHECKOUT_STATES] }),
    amount: nullable(Money),
    completed_date: nullable(DateTime),
    frequency: nullable(Frequency),
    cost_example_quantity: Type.Integer({
      minimum: 0,
      description: "floor(amount / campaign cost example amount); 0 when either is missing",
    }),
    payment_method_processor: nullable(Type.String()),
    payment_method_label: nullable(Type.String()),
    payment_method_id: nullable(Id),
  },
  "A donor's visit to a donation form, from opening to payment",
);
export type CheckoutWire = Static<typeof Checkout>;

export const CHECKOUT_ORDER_FIELDS = [
  "id",
  "create_date",
  "update_date",
  "state",
  "amount",
  "completed_date",
  "frequency",
  "cost_example_quantity",
  "payment_method_processor",
  "payment_method_label",
  "payment_method_id",
] as const;

export const CheckoutListQuery = listQuerySchema(CHECKOUT_ORDER_FIELDS, {
  q: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        "Case-insensitive substring of the supporter's first, last or business name or email, the campaign title or the donation code; or the exact checkout id",
    }),
  ),
  state: Type.Optional(Type.String({ enum: [...CHECKOUT_STATES] })),
  campaign_id: Type.Optional(Id),
  supporter_id: Type.Optional(Id),
  frequency: Type.Optional(Frequency),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
});
export type CheckoutListQuery = Static<typeof CheckoutListQuery>;

export const CheckoutList = listResponseSchema(Checkout, "checkouts");
