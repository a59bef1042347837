import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields, inputFieldsFrom } from "../../graphql/wire-fields.js";
import { validateAgainst } from "../../http/validate.js";
import {
  Supporter,
  SupporterInput,
  SupporterListQuery,
  SupporterPatch,
  type SupporterWire,
} from "./supporters.schemas.js";
import {
  createSupporter,
  eraseSupporter,
  getSupporter,
  listSupporters,
  updateSupporter,
} from "./supporters.service.js";

export const SupporterType = builder.objectRef<SupporterWire>("Supporter").implement({
  description: describe(Supporter),
  fields: (t) => exposeWireFields(t, Supporter),
});

defineCollection({
  collection: "supporters",
  singular: "supporter",
  type: SupporterType,
  listQuery: SupporterListQuery,
  permission: "supporters:read",
  list: listSupporters,
  retrieve: getSupporter,
});

const SupporterInputType = builder.inputType("SupporterInput", {
  description: describe(SupporterInput),
  fields: (t) => inputFieldsFrom(t, SupporterInput),
});

const SupporterPatchType = builder.inputType("SupporterPatch", {
  description: describe(SupporterPatch),
  fields: (t) => inputFieldsFrom(t, SupporterPatch),
});

builder.mutationFields((t) => ({
  createSupporter: t.field({
    type: SupporterType,
    args: { input: t.arg({ type: SupporterInputType, required: true }) },
    resolve: async (_root, { input }, context) => {
      authorize(context, "supporters:write");
      const values = validateAgainst<SupporterInput>(SupporterInput, input, "field");
      return (await createSupporter(context.db, context.scope, values)).body;
    },
  }),
  updateSupporter: t.field({
    type: SupporterType,
    description: "Edits a supporter, consents included",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: SupporterPatchType, required: true }) },
    resolve: (_root, { id, input }, context) => {
      authorize(context, "supporters:write");
      const patch = validateAgainst<SupporterPatch>(SupporterPatch, input, "field");
      return updateSupporter(context.db, context.scope, String(id), patch);
    },
  }),
  eraseSupporter: t.field({
    type: SupporterType,
    description: "Erases the supporter's personal data (GDPR); donations and payments stay for accounting",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "supporters:write");
      return eraseSupporter(context.db, context.scope, String(id));
    },
  }),
}));
