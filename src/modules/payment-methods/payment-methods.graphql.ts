import { builder } from "../../graphql/builder.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { PaymentMethod, type PaymentMethodWire } from "./payment-methods.schemas.js";

export const PaymentMethodType = builder.objectRef<PaymentMethodWire>("PaymentMethod").implement({
  description: describe(PaymentMethod),
  fields: (t) => exposeWireFields(t, PaymentMethod),
});
