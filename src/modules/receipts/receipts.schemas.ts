import { type Static, Type } from "typebox";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { DateTime, Id, Money, nullable, wireObject } from "../../http/schema-types.js";

export const RECEIPT_KINDS = ["payment", "statement"] as const;
export const VOID_REASONS = ["refunded", "partially_refunded", "disputed", "partially_disputed"] as const;

export const Receipt = wireObject(
  {
    id: Id,
    kind: Type.String({
      enum: [...RECEIPT_KINDS],
      description: "payment: one paid payment's receipt; statement: a donor's yearly statement",
    }),
    number: Type.Integer({ minimum: 1, description: "Progressive per organization, kind and year" }),
    year: Type.Integer(),
    code: Type.String({ description: "How it is cited: 2026-000042, a statement 2026-S000007" }),
    supporter_id: Id,
    donation_id: nullable(Id),
    payment_id: nullable(Id),
    amount: Money,
    currency: Type.String({ description: "ISO 4217 code" }),
    gift_date: Type.String({
      format: "date-time",
      description: "When the gift was received (a statement: its year's end)",
    }),
    payment_method: nullable(Type.String({ description: "The method's label, as printed" })),
    reference: nullable(Type.String({ description: "The donation's code (DON-…)" })),
    traceable: Type.Boolean({ description: "Paid through a bank or card (what Italian deductions require)" }),
    locale: Type.String({ description: "The language it was issued in (en, it)" }),
    create_date: DateTime,
    void_date: nullable(DateTime),
    void_reason: nullable(Type.String({ enum: [...VOID_REASONS] })),
    replaces_id: nullable(Id),
    url: nullable(
      Type.String({
        description:
          "The signed link to its printable page (add /pdf for the PDF); null unless the reader may also read supporters (it shows the donor's name, address and tax code)",
      }),
    ),
  },
  "An issued receipt or yearly statement, numbered, as printed (docs/receipts.md)",
);
export type ReceiptApiWire = Static<typeof Receipt>;

export const RECEIPT_ORDER_FIELDS = ["id", "create_date", "year", "number", "amount", "gift_date"] as const;

export const ReceiptListQuery = listQuerySchema(RECEIPT_ORDER_FIELDS, {
  kind: Type.Optional(Type.String({ enum: [...RECEIPT_KINDS] })),
  year: Type.Optional(Type.Integer({ minimum: 2000, maximum: 9999 })),
  supporter_id: Type.Optional(Id),
  donation_id: Type.Optional(Id),
  payment_id: Type.Optional(Id),
  void: Type.Optional(Type.Boolean({ description: "true: void receipts only; false: valid ones only" })),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
});
export type ReceiptListQuery = Static<typeof ReceiptListQuery>;

export const ReceiptList = listResponseSchema(Receipt, "receipts");
