import { builder } from "../../graphql/builder.js";
import { SEGMENT_COLLECTIONS, type SegmentFilter } from "./segment-filters.js";
import {
  createSegment,
  deleteSegment,
  listSegments,
  MAX_SEGMENT_NAME_LENGTH,
  type SegmentWire,
  updateSegment,
} from "./segments.service.js";

const SegmentFilterType = builder.objectRef<SegmentFilter>("SegmentFilter").implement({
  description: "One filter of a segment, as the table's URL carries it",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The list's parameter, e.g. country, create_date_from" }),
    value: t.exposeString("value", { description: "Its value as text, e.g. IT, 2026-01-01, 12, true" }),
  }),
});

const SegmentFilterInput = builder.inputType("SegmentFilterInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    value: t.string({ required: true }),
  }),
});

const SegmentType = builder.objectRef<SegmentWire & { can_change: boolean }>("Segment").implement({
  description: "A saved segment: a named set of one table's filters, for the table and its CSV export",
  fields: (t) => ({
    id: t.exposeInt("id"),
    collection: t.exposeString("collection", { description: SEGMENT_COLLECTIONS.join(", ") }),
    name: t.exposeString("name"),
    filters: t.field({
      type: [SegmentFilterType],
      description: "In the order the table shows its filters",
      resolve: (segment) => segment.filters,
    }),
    created_by: t.exposeInt("created_by", {
      nullable: true,
      description: "The member who saved it; null once their account is gone",
    }),
    create_date: t.exposeString("create_date"),
    update_date: t.exposeString("update_date"),
    can_change: t.exposeBoolean("can_change", {
      description: "Whether the reader may rename, change or delete it: its creator, an owner or an admin",
    }),
  }),
});

const filtersArgument = `Each a filter of the collection's table (the list's parameter and its value as text), once`;

builder.queryField("segments", (t) =>
  t.field({
    type: [SegmentType],
    description: "A table's saved segments, by name; members only",
    args: { collection: t.arg.string({ required: true, description: SEGMENT_COLLECTIONS.join(", ") }) },
    resolve: (_root, { collection }, context) => listSegments(context.db, context.scope, context.actor, collection),
  }),
);

builder.mutationFields((t) => ({
  createSegment: t.field({
    type: SegmentType,
    description: `Saves a segment of a table's filters (a name of 1–${MAX_SEGMENT_NAME_LENGTH} characters, unique in the table in any case); any member`,
    args: {
      collection: t.arg.string({ required: true, description: SEGMENT_COLLECTIONS.join(", ") }),
      name: t.arg.string({ required: true }),
      filters: t.arg({ type: [SegmentFilterInput], required: true, description: filtersArgument }),
    },
    resolve: (_root, args, context) => createSegment(context.db, context.scope, context.actor, args),
  }),
  updateSegment: t.field({
    type: SegmentType,
    description: "Renames a segment or replaces its filters (what is omitted stays); its creator, an owner or an admin",
    args: {
      id: t.arg.id({ required: true }),
      name: t.arg.string(),
      filters: t.arg({ type: [SegmentFilterInput], description: filtersArgument }),
    },
    resolve: (_root, args, context) =>
      updateSegment(context.db, context.scope, context.actor, String(args.id), {
        name: args.name,
        filters: args.filters,
      }),
  }),
  deleteSegment: t.field({
    type: SegmentType,
    description: "Deletes a segment and answers it as it was; its creator, an owner or an admin",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => deleteSegment(context.db, context.scope, context.actor, String(args.id)),
  }),
}));
