import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { DonationType } from "../donations/donations.graphql.js";
import type { DonationWire } from "../donations/donations.schemas.js";
import { PaymentType } from "../payments/payments.graphql.js";
import type { PaymentWire } from "../payments/payments.schemas.js";
import type { ConsentRecordWire } from "./consent-records.repo.js";
import { SupporterType } from "./supporters.graphql.js";
import type { SupporterWire } from "./supporters.schemas.js";
import { CONSENT_NAMES } from "./supporters.schemas.js";
import { exportSupporter } from "./supporters.service.js";

interface SupporterExport {
  export_date: string;
  supporter: SupporterWire;
  donations: DonationWire[];
  payments: PaymentWire[];
  consent_records: ConsentRecordWire[];
  notes: ExportedNote[];
}

interface ExportedNote {
  id: number;
  create_date: string;
  author_name: string;
  body: string;
}

const ExportedNoteType = builder.objectRef<ExportedNote>("SupporterExportNote").implement({
  description: "A note the organization's people (or an application) wrote about the supporter",
  fields: (t) => ({
    id: t.exposeInt("id"),
    create_date: t.exposeString("create_date"),
    author_name: t.exposeString("author_name", { description: "Who wrote it, as named when they did" }),
    body: t.exposeString("body"),
  }),
});

const ConsentRecordType = builder.objectRef<ConsentRecordWire>("ConsentRecord").implement({
  description:
    "Consents as a supporter declared them, when and through what (a gift's declaration is kept even when it " +
    "differs from the supporter's own consents, which a gift never changes)",
  fields: (t) => ({
    id: t.exposeInt("id"),
    create_date: t.exposeString("create_date"),
    source: t.exposeString("source", {
      description: "checkout: declared with a gift; import: read from a file imported from another platform",
    }),
    donation_id: t.exposeInt("donation_id", { nullable: true, description: "The gift it was declared with" }),
    applied: t.exposeBoolean("applied", {
      description: "Whether it became the supporter's consents (only when the gift created the supporter)",
    }),
    ...Object.fromEntries(
      CONSENT_NAMES.map((name) => [name, t.exposeBoolean(name, { nullable: true, description: "null: not declared" })]),
    ),
  }),
});

const SupporterExportType = builder.objectRef<SupporterExport>("SupporterExport").implement({
  description: "Everything the organization holds about a supporter (GDPR access and portability)",
  fields: (t) => ({
    export_date: t.exposeString("export_date"),
    supporter: t.field({ type: SupporterType, resolve: (data) => data.supporter }),
    donations: t.field({ type: [DonationType], resolve: (data) => data.donations }),
    payments: t.field({ type: [PaymentType], resolve: (data) => data.payments }),
    consent_records: t.field({ type: [ConsentRecordType], resolve: (data) => data.consent_records }),
    notes: t.field({ type: [ExportedNoteType], description: "Newest first", resolve: (data) => data.notes }),
  }),
});

// A mutation, not a query: an export is an audited act on personal data, not a read for display.
builder.mutationField("exportSupporter", (t) =>
  t.field({
    type: SupporterExportType,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "supporters:write");
      return exportSupporter(context.db, context.scope, String(id));
    },
  }),
);
