import { can } from "../../auth/actor.js";
import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { mayOpenLink } from "../documents/document-access.js";
import { listReceipts, type ReceiptWire } from "./receipts.service.js";

const ReceiptType = builder.objectRef<ReceiptWire>("Receipt").implement({
  description: "An issued receipt (a paid payment's) or yearly statement: numbered per organization and year",
  fields: (t) => ({
    id: t.exposeInt("id"),
    kind: t.exposeString("kind", { description: "payment or statement" }),
    number: t.exposeInt("number", { description: "Progressive within the organization's year, from 1, no gaps" }),
    year: t.exposeInt("year"),
    code: t.exposeString("code", { description: "How it is cited: 2026-000042" }),
    supporter_id: t.exposeInt("supporter_id"),
    donation_id: t.exposeInt("donation_id", { nullable: true }),
    payment_id: t.exposeInt("payment_id", { nullable: true }),
    amount: t.exposeFloat("amount"),
    currency: t.exposeString("currency"),
    gift_date: t.exposeString("gift_date"),
    payment_method: t.exposeString("payment_method", { nullable: true }),
    reference: t.exposeString("reference", { nullable: true, description: "The donation's code (DON-…)" }),
    traceable: t.exposeBoolean("traceable", { description: "Paid through a bank, a card or a processor (not cash)" }),
    locale: t.exposeString("locale"),
    create_date: t.exposeString("create_date", { description: "When it was issued" }),
    void_date: t.exposeString("void_date", {
      nullable: true,
      description: "Set when a refund or a lost dispute voided it",
    }),
    void_reason: t.exposeString("void_reason", {
      nullable: true,
      description: "refunded, partially_refunded, disputed or partially_disputed (a dispute the organization lost)",
    }),
    replaces_id: t.exposeInt("replaces_id", { nullable: true }),
    url: t.string({
      nullable: true,
      description:
        "The signed link to its page; add /pdf for the PDF. null unless the reader may also read supporters (it shows the donor's name, address and tax code)",
      resolve: (receipt, _args, context) =>
        mayOpenLink("receipt_url", (permission) => can(context.actor, permission)) ? receipt.url : null,
    }),
  }),
});

builder.queryFields((t) => ({
  receipts: t.field({
    type: [ReceiptType],
    description:
      "The organization's receipts and statements, newest first (at most `first`, 100 by default, 500 at most)",
    args: {
      supporter_id: t.arg.int(),
      year: t.arg.int(),
      kind: t.arg.string({ description: "payment or statement" }),
      first: t.arg.int(),
    },
    resolve: (_root, args, context) => {
      authorize(context, "donations:read");
      return listReceipts(context.db, context.links, context.scope.organizationId, args);
    },
  }),
}));
