import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { parseId } from "../../http/ids.js";
import { findSupporterMerge } from "./supporter-merges.repo.js";
import { type ConsentChoice, mergeSupporters, previewSupporterMerge } from "./supporter-merges.service.js";
import { authorOf } from "./supporter-notes.service.js";
import { SupporterType } from "./supporters.graphql.js";
import type { SupporterWire } from "./supporters.schemas.js";

const ConsentChoiceType = builder.objectRef<ConsentChoice>("SupporterMergeConsent").implement({
  description: "A consent as each supporter has it, and what the kept one will have (the most recently updated wins)",
  fields: (t) => ({
    consent: t.exposeString("consent"),
    kept: t.exposeBoolean("kept", { nullable: true }),
    merged: t.exposeBoolean("merged", { nullable: true }),
    result: t.exposeBoolean("result", { nullable: true }),
    from: t.exposeString("from", { nullable: true, description: "kept, merged, or null when neither said" }),
  }),
});

interface Difference {
  field: string;
  kept: unknown;
  merged: unknown;
}
const DifferenceType = builder.objectRef<Difference>("SupporterMergeDifference").implement({
  description: "A field both supporters fill differently: the kept one's stays, the merged one's goes into a note",
  fields: (t) => ({
    field: t.exposeString("field"),
    kept: t.string({ resolve: (row) => String(row.kept) }),
    merged: t.string({ resolve: (row) => String(row.merged) }),
  }),
});

const PreviewType = builder
  .objectRef<Awaited<ReturnType<typeof previewSupporterMerge>>>("SupporterMergePreview")
  .implement({
    description: "What merging one supporter into another would do; nothing is written",
    fields: (t) => ({
      kept: t.field({ type: SupporterType, resolve: (plan) => plan.kept }),
      merged: t.field({ type: SupporterType, resolve: (plan) => plan.merged }),
      result: t.field({
        type: SupporterType,
        description: "The kept supporter as the merge leaves it",
        resolve: (plan) => plan.result,
      }),
      consents: t.field({ type: [ConsentChoiceType], resolve: (plan) => plan.consents }),
      differences: t.field({ type: [DifferenceType], resolve: (plan) => plan.differences }),
    }),
  });

interface MergeResult {
  supporter: SupporterWire;
  merged_id: number;
}
const MergeResultType = builder.objectRef<MergeResult>("SupporterMergeResult").implement({
  fields: (t) => ({
    supporter: t.field({
      type: SupporterType,
      description: "The kept supporter",
      resolve: (result) => result.supporter,
    }),
    merged_id: t.exposeInt("merged_id", { description: "The merged supporter's id, which now answers 404" }),
  }),
});

interface MergePointer {
  merged_id: number;
  kept_id: number;
  merge_date: string;
}
const MergePointerType = builder.objectRef<MergePointer>("SupporterMerge").implement({
  description: "Where a merged supporter went",
  fields: (t) => ({
    merged_id: t.exposeInt("merged_id"),
    kept_id: t.exposeInt("kept_id", { description: "The supporter that holds its gifts, consents and notes now" }),
    merge_date: t.exposeString("merge_date"),
  }),
});

builder.queryFields((t) => ({
  supporterMergePreview: t.field({
    type: PreviewType,
    description:
      "What merging merged_id into kept_id would do (consents chosen, fields filled, differences kept as a note)",
    args: { kept_id: t.arg.id({ required: true }), merged_id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "supporters:read");
      return previewSupporterMerge(context.db, context.scope, String(args.kept_id), String(args.merged_id));
    },
  }),
  supporterMerge: t.field({
    type: MergePointerType,
    nullable: true,
    description: "Where a merged supporter went; null for an id that was never merged",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, context) => {
      authorize(context, "supporters:read");
      const row = await findSupporterMerge(context.db, context.scope.organizationId, parseId(String(id), "Supporter"));
      return row ? { merged_id: row.mergedId, kept_id: row.keptId, merge_date: row.mergeDate.toISOString() } : null;
    },
  }),
}));

builder.mutationFields((t) => ({
  mergeSupporters: t.field({
    type: MergeResultType,
    description:
      "Merges merged_id into kept_id: gifts, payments, checkouts, payment methods, consent records, notes, receipts and emails move; the merged id answers 404 after",
    args: { kept_id: t.arg.id({ required: true }), merged_id: t.arg.id({ required: true }) },
    resolve: async (_root, args, context) => {
      authorize(context, "supporters:write");
      const author = await authorOf(context.db, context.actor);
      return mergeSupporters(context.db, context.scope, String(args.kept_id), String(args.merged_id), {
        userId: author.authorUserId,
        name: author.authorName,
      });
    },
  }),
}));
