import { builder } from "../../graphql/builder.js";
import type { RowProblem } from "./import-rows.js";
import { findImport, type ImportWire, listImports, type RefusedRowWire } from "./imports.service.js";

const ImportRowProblemType = builder.objectRef<RowProblem>("ImportRowProblem").implement({
  description: "Why a row was refused: its column as the file names it, the field, the reason",
  fields: (t) => ({
    column: t.exposeString("column"),
    field: t.exposeString("field"),
    message: t.exposeString("message"),
  }),
});

const ImportRefusedRowType = builder.objectRef<RefusedRowWire>("ImportRefusedRow").implement({
  description: "A row of the file that was not imported, with every problem it has",
  fields: (t) => ({
    line: t.exposeInt("line", { description: "Its line in the file (the header is line 1)" }),
    external_id: t.exposeString("external_id", { nullable: true }),
    problems: t.field({ type: [ImportRowProblemType], resolve: (row) => row.problems }),
  }),
});

const ImportMappingType = builder.objectRef<{ column: string; field: string }>("ImportMapping").implement({
  description: "A column mapped by hand: the field it fills, or ignore",
  fields: (t) => ({ column: t.exposeString("column"), field: t.exposeString("field") }),
});

const ImportType = builder.objectRef<ImportWire>("Import").implement({
  description:
    "A file imported from the panel (docs/import.md): queued, run by the worker in batches, then its counts and results",
  fields: (t) => ({
    id: t.exposeInt("id"),
    kind: t.exposeString("kind", { description: "supporters (donations to come)" }),
    file_name: t.exposeString("file_name"),
    preset: t.exposeString("preset", { nullable: true, description: "givebutter, donorbox or null" }),
    mapping: t.field({
      type: [ImportMappingType],
      description: "The columns mapped by hand, over the preset's",
      resolve: (row) => Object.entries(row.mapping ?? {}).map(([column, field]) => ({ column, field })),
    }),
    dry_run: t.exposeBoolean("dry_run", { description: "Every row checked and matched, nothing written" }),
    state: t.exposeString("state", { description: "queued, running, done or failed" }),
    rows_total: t.exposeInt("rows_total"),
    rows_done: t.exposeInt("rows_done", { description: "Rows checked and written so far (after each batch)" }),
    created: t.exposeInt("created"),
    updated: t.exposeInt("updated"),
    unchanged: t.exposeInt("unchanged"),
    refused: t.exposeInt("refused"),
    refused_rows: t.field({
      type: [ImportRefusedRowType],
      description: "The first refused rows (at most 100); the results CSV has every row",
      args: { first: t.arg.int({ description: "1 to 100; default 100" }) },
      resolve: (row, args) => row.refused_rows.slice(0, Math.max(1, Math.min(100, args.first ?? 100))),
    }),
    results_url: t.string({
      nullable: true,
      description: "Every row's outcome as CSV (with the panel's session), once the import is done",
      resolve: (row, _args, context) =>
        row.state === "done"
          ? `/admin/imports/${row.id}/results.csv?${new URLSearchParams({ organization: context.scope.organizationSlug })}`
          : null,
    }),
    error: t.exposeString("error", { nullable: true, description: "Why a failed import stopped" }),
    created_by: t.exposeInt("created_by", { nullable: true, description: "The member who uploaded it" }),
    create_date: t.exposeString("create_date"),
    start_date: t.exposeString("start_date", { nullable: true }),
    finish_date: t.exposeString("finish_date", { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  imports: t.field({
    type: [ImportType],
    description: "The files imported from the panel, newest first (owners and admins)",
    args: { first: t.arg.int({ description: "1 to 100; default 20" }) },
    resolve: (_root, args, context) => listImports(context.db, context.scope, context.actor, args.first ?? 20),
  }),
  import: t.field({
    type: ImportType,
    description: "One import: its state, progress, counts and first refused rows (owners and admins)",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => findImport(context.db, context.scope, context.actor, String(args.id)),
  }),
}));
