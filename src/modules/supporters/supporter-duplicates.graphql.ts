import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import {
  DEFAULT_DUPLICATES_LIMIT,
  type DuplicateGroupWire,
  listSupporterDuplicates,
  MAX_DUPLICATES_LIMIT,
} from "./supporter-duplicates.service.js";
import { SupporterType } from "./supporters.graphql.js";

const DuplicateGroupType = builder.objectRef<DuplicateGroupWire>("SupporterDuplicateGroup").implement({
  description: "Live supporters who look like one person",
  fields: (t) => ({
    reason: t.exposeString("reason", {
      description:
        "email: the same email (trimmed, any case); name_and_postal_code: the same first and last name (trimmed, any case) and postal code (spaces removed)",
    }),
    supporters: t.field({
      type: [SupporterType],
      description: "Two or more, oldest first",
      resolve: (group) => group.supporters,
    }),
  }),
});

const DuplicateGroupListType = builder
  .objectRef<{ count: number; items: DuplicateGroupWire[] }>("SupporterDuplicateGroupList")
  .implement({
    description: "A page of suggested duplicates and how many groups there are",
    fields: (t) => ({
      items: t.field({ type: [DuplicateGroupType], resolve: (page) => page.items }),
      count: t.exposeInt("count", { description: "Total number of groups ignoring limit and offset" }),
    }),
  });

builder.queryField("supporterDuplicates", (t) =>
  t.field({
    type: DuplicateGroupListType,
    description:
      "Live supporters suggested as duplicates: the same email, or else the same name and postal code; newest group first",
    args: {
      limit: t.arg.int({ description: `Page size, 1–${MAX_DUPLICATES_LIMIT}, default ${DEFAULT_DUPLICATES_LIMIT}` }),
      offset: t.arg.int({ description: "Groups skipped from the start" }),
    },
    resolve: (_root, args, context) => {
      authorize(context, "supporters:read");
      return listSupporterDuplicates(context.db, context.scope, args);
    },
  }),
);
