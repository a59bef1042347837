import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { Supporter, SupporterListQuery, type SupporterWire } from "./supporters.schemas.js";
import { getSupporter, listSupporters } from "./supporters.service.js";

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
