import { type Static, Type } from "typebox";
import { DateTime, Id, wireObject } from "../../http/schema-types.js";
import { Payment } from "../payments/payments.schemas.js";
import { Donation } from "./donations.schemas.js";

const Amount = Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000, description: "At most 2 decimals" });
const ShortText = (maxLength = 200) => Type.String({ maxLength });

export const OfflineDonationBody = Type.Object(
  {
    supporter_id: Id,
    campaign_id: Id,
    amount: Amount,
    payment_date: Type.Optional(DateTime),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'e.g. "Cash", "Cheque"' })),
    note: Type.Optional(ShortText(2000)),
  },
  { additionalProperties: false },
);
export type OfflineDonationBody = Static<typeof OfflineDonationBody>;

export const DonationWithPayment = wireObject(
  { donation: Donation, payment: Payment },
  "A donation with the payment just recorded for it",
);
