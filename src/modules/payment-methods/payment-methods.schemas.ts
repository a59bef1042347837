import { type Static, Type } from "typebox";
import { DateTime, Id, wireObject } from "../../http/schema-types.js";

export const PaymentMethod = wireObject(
  {
    id: Id,
    create_date: DateTime,
    update_date: DateTime,
    processor: Type.String({ description: "Processor adapter, e.g. sandbox or manual" }),
    label: Type.String({ description: 'Human label such as "Visa •••• 4242"; never a card number' }),
  },
  "A stored way to pay",
);
export type PaymentMethodWire = Static<typeof PaymentMethod>;
