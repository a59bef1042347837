import { type Static, Type } from "typebox";
import { ExternalId, ExternalIdFilter } from "../../http/external-id.js";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { DateTime, Id, Money, nullable, wireObject } from "../../http/schema-types.js";
import { PaymentMethod } from "../payment-methods/payment-methods.schemas.js";

export const PAYMENT_STATES = ["PENDING", "PAID", "REFUNDED", "FAILED"] as const;

export const Payment = wireObject(
  {
    id: Id,
    donation_id: Id,
    state: Type.String({ enum: [...PAYMENT_STATES] }),
    amount: Money,
    currency: Type.String({ description: "ISO 4217 code" }),
    payment_date: nullable(DateTime),
    payment_method: nullable(PaymentMethod),
    processor_intent_id: nullable(
      Type.String({ description: "Identifier of the payment intent at the external payment processor" }),
    ),
    create_date: DateTime,
    update_date: DateTime,
    test: Type.Boolean({
      description:
        "Test data: a charge the sandbox took while the organization was in test mode (no real money moved); kept out of totals, raised figures and yearly statements",
    }),
    external_id: nullable(ExternalId("payment")),
  },
  "One charge of a donation",
);
export type PaymentWire = Static<typeof Payment>;

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description: "What to refund, in the payment's currency; default: all that is not yet refunded",
      }),
    ),
  },
  { additionalProperties: false, description: "An optional body: without it the whole remaining amount is refunded" },
);
export type RefundBody = Static<typeof RefundBody>;

export const PAYMENT_ORDER_FIELDS = [
  "id",
  "donation_id",
  "state",
  "amount",
  "currency",
  "payment_date",
  "payment_method_id",
  "processor_intent_id",
  "create_date",
  "update_date",
  "external_id",
] as const;

export const PaymentListQuery = listQuerySchema(PAYMENT_ORDER_FIELDS, {
  state: Type.Optional(Type.String({ enum: [...PAYMENT_STATES] })),
  donation_id: Type.Optional(Id),
  payment_method_id: Type.Optional(Id),
  processor_intent_id: Type.Optional(Type.String({ maxLength: 200 })),
  external_id: Type.Optional(ExternalIdFilter),
  test: Type.Optional(Type.Boolean({ description: "true: test payments only; false: real ones only" })),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
  payment_date_from: Type.Optional(DateFilter),
  payment_date_to: Type.Optional(DateFilter),
});
export type PaymentListQuery = Static<typeof PaymentListQuery>;

export const PaymentList = listResponseSchema(Payment, "payments");
