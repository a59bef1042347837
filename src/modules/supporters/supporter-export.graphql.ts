import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { DonationType } from "../donations/donations.graphql.js";
import type { DonationWire } from "../donations/donations.schemas.js";
import { PaymentType } from "../payments/payments.graphql.js";
import type { PaymentWire } from "../payments/payments.schemas.js";
import { SupporterType } from "./supporters.graphql.js";
import type { SupporterWire } from "./supporters.schemas.js";
import { exportSupporter } from "./supporters.service.js";

interface SupporterExport {
  export_date: string;
  supporter: SupporterWire;
  donations: DonationWire[];
  payments: PaymentWire[];
}

const SupporterExportType = builder.objectRef<SupporterExport>("SupporterExport").implement({
  description: "Everything the organization holds about a supporter (GDPR access and portability)",
  fields: (t) => ({
    export_date: t.exposeString("export_date"),
    supporter: t.field({ type: SupporterType, resolve: (data) => data.supporter }),
    donations: t.field({ type: [DonationType], resolve: (data) => data.donations }),
    payments: t.field({ type: [PaymentType], resolve: (data) => data.payments }),
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
