import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import {
  addSupporterNote,
  deleteSupporterNote,
  listSupporterNotes,
  MAX_NOTE_LENGTH,
  MAX_NOTES_LISTED,
  type SupporterNoteWire,
} from "./supporter-notes.service.js";
import { SupporterType } from "./supporters.graphql.js";

const SupporterNoteType = builder.objectRef<SupporterNoteWire>("SupporterNote").implement({
  description: "A dated note about a supporter, with its author",
  fields: (t) => ({
    id: t.exposeInt("id"),
    supporter_id: t.exposeInt("supporter_id"),
    author_user_id: t.exposeInt("author_user_id", {
      nullable: true,
      description: "The member who wrote it; null when an application wrote it, or the member's account is gone",
    }),
    author_name: t.exposeString("author_name", { description: "The author's name when they wrote it" }),
    body: t.exposeString("body"),
    create_date: t.exposeString("create_date"),
    can_delete: t.exposeBoolean("can_delete", {
      description: "Whether the reader may delete it: its author, an owner or an admin",
    }),
  }),
});

builder.objectFields(SupporterType, (t) => ({
  notes: t.field({
    type: [SupporterNoteType],
    description: "Notes about the supporter, newest first",
    args: { limit: t.arg.int({ description: `1–${MAX_NOTES_LISTED}, default 100` }) },
    resolve: (supporter, { limit }, context) => {
      authorize(context, "supporters:read");
      return listSupporterNotes(context.db, context.scope, context.actor, supporter.id, limit ?? 100);
    },
  }),
}));

builder.mutationFields((t) => ({
  addSupporterNote: t.field({
    type: SupporterNoteType,
    description: `Adds a note (1–${MAX_NOTE_LENGTH} characters) to a supporter; any member, or an application with supporters:write`,
    args: { supporter_id: t.arg.id({ required: true }), body: t.arg.string({ required: true }) },
    resolve: (_root, args, context) =>
      addSupporterNote(context.db, context.scope, context.actor, String(args.supporter_id), args.body),
  }),
  deleteSupporterNote: t.field({
    type: SupporterNoteType,
    description: "Deletes a note and answers it as it was; its author, an owner or an admin only",
    args: { supporter_id: t.arg.id({ required: true }), note_id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) =>
      deleteSupporterNote(context.db, context.scope, context.actor, String(args.supporter_id), String(args.note_id)),
  }),
}));
