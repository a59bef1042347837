import { PassThrough, Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { Zip, ZipPassThrough } from "fflate";
import { type TObject, type TSchema, Type } from "typebox";
import type { Scope } from "../auth/scope.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { csvCell } from "../http/csv.js";
import type { Locale } from "../i18n/locales.js";
import { negotiateLocale } from "../i18n/negotiate.js";
import { type AuditQuery, auditFiltersOf, auditLogPages } from "../modules/audit/audit.service.js";
import { Campaign, CampaignListQuery } from "../modules/campaigns/campaigns.schemas.js";
import { listCampaigns } from "../modules/campaigns/campaigns.service.js";
import { Checkout, CheckoutListQuery } from "../modules/checkouts/checkouts.schemas.js";
import { listCheckouts } from "../modules/checkouts/checkouts.service.js";
import { Donation, DonationListQuery } from "../modules/donations/donations.schemas.js";
import { listDonations } from "../modules/donations/donations.service.js";
import {
  DONATION_CSV_EXTRA_COLUMNS,
  DONATION_CSV_REPLACED,
  donationCsvCells,
} from "../modules/donations/donations-csv.js";
import { Payment, PaymentListQuery } from "../modules/payments/payments.schemas.js";
import { listPayments } from "../modules/payments/payments.service.js";
import { receiptLogo } from "../modules/receipts/receipt-access.js";
import { receiptContent } from "../modules/receipts/receipt-document.js";
import { receiptPdf } from "../modules/receipts/receipt-pdf.js";
import { listReceiptsOfYear } from "../modules/receipts/receipts.repo.js";
import { receiptCode } from "../modules/receipts/receipts.service.js";
import { Supporter, SupporterListQuery } from "../modules/supporters/supporters.schemas.js";
import { listSupporters } from "../modules/supporters/supporters.service.js";
import { panelMember } from "./panel-member.js";

type Lister = (db: Db, scope: Scope, query: never) => Promise<{ items: unknown[]; count: number }>;

/** A collection's own columns in place of wire fields a cell cannot hold (objects, lists of objects). */
interface ExtraColumns {
  replaced: readonly string[];
  columns: readonly string[];
  cells: (item: never) => Record<string, unknown>;
}

/** Columns in the order of the item's wire schema, whatever order a service builds objects in. */
const COLLECTIONS: Record<string, { query: TSchema; item: TSchema; list: Lister; extra?: ExtraColumns }> = {
  campaigns: { query: CampaignListQuery, item: Campaign, list: listCampaigns as Lister },
  supporters: { query: SupporterListQuery, item: Supporter, list: listSupporters as Lister },
  donations: {
    query: DonationListQuery,
    item: Donation,
    list: listDonations as Lister,
    extra: { replaced: DONATION_CSV_REPLACED, columns: DONATION_CSV_EXTRA_COLUMNS, cells: donationCsvCells },
  },
  payments: { query: PaymentListQuery, item: Payment, list: listPayments as Lister },
  checkouts: { query: CheckoutListQuery, item: Checkout, list: listCheckouts as Lister },
};

const PAGE = 1000;

/** Nested objects become their id column (`campaign` → `campaign_id`), arrays one cell; then the extra columns. */
function columnsOf(item: TSchema, extra?: ExtraColumns): { key: string; header: string }[] {
  return [
    ...Object.entries((item as TObject).properties)
      .filter(([key]) => !extra?.replaced.includes(key))
      .map(([key, schema]) => {
        const types = ([] as unknown[]).concat((schema as { type?: unknown }).type ?? []);
        const nested = types.includes("object") || "$ref" in (schema as object);
        return { key, header: nested ? `${key}_id` : key };
      }),
    ...(extra?.columns ?? []).map((key) => ({ key, header: key })),
  ];
}

/**
 * The admin panel's CSV download of a filtered list: same filters and order as the API,
 * streamed page by page so 100,000 rows never sit in memory.
 */
export function adminExportRoutes(app: FastifyInstance, db: Db) {
  for (const [collection, { query, item, list, extra }] of Object.entries(COLLECTIONS)) {
    const columns = columnsOf(item, extra);
    const cellsOf = (row: unknown) =>
      extra ? { ...(row as Record<string, unknown>), ...extra.cells(row as never) } : (row as Record<string, unknown>);
    const { limit: _limit, offset: _offset, ...filters } = (query as TObject).properties;
    app.get(
      `/admin/export/${collection}.csv`,
      {
        schema: {
          hide: true,
          querystring: Type.Object(
            { ...filters, organization: Type.String({ minLength: 1, maxLength: 100 }) },
            { additionalProperties: false },
          ),
        },
      },
      async (request, reply) => {
        const { organization: slug, ...params } = request.query as Record<string, unknown>;
        const { membership } = await panelMember(db, request);
        const scope: Scope = { organizationId: membership.id, timeZone: membership.timeZone };
        // The first page runs before the answer starts, so bad parameters are still a clean 400.
        const first = await list(db, scope, { ...params, limit: PAGE, offset: 0 } as never);
        async function* rows() {
          let page = first;
          yield `${columns.map((column) => column.header).join(",")}\r\n`;
          for (let offset = 0; offset < first.count && page.items.length > 0; ) {
            yield page.items
              .map((item) => {
                const cells = cellsOf(item);
                return `${columns.map((c) => csvCell(cells[c.key])).join(",")}\r\n`;
              })
              .join("");
            offset += page.items.length;
            if (offset >= first.count) break;
            page = await list(db, scope, { ...params, limit: PAGE, offset } as never);
          }
        }
        const date = new Date().toISOString().slice(0, 10);
        return reply
          .header("content-type", "text/csv; charset=utf-8")
          .header("content-disposition", `attachment; filename="${slug}-${collection}-${date}.csv"`)
          .header("cache-control", "private, no-store")
          .send(Readable.from(rows()));
      },
    );
  }

  // A year's issued statements, one PDF each, in one ZIP (docs/receipts.md): streamed as each is drawn.
  app.get(
    "/admin/export/statements.zip",
    {
      schema: {
        hide: true,
        querystring: Type.Object(
          {
            organization: Type.String({ minLength: 1, maxLength: 100 }),
            year: Type.Integer({ minimum: 2000, maximum: 9999 }),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const { organization: slug, year } = request.query as { organization: string; year: number };
      const { membership } = await panelMember(db, request);
      const statements = (await listReceiptsOfYear(db, membership.id, "statement", year)).filter(
        (row) => row.voidDate === null,
      );
      const out = new PassThrough();
      const zip = new Zip((error, chunk, final) => {
        if (error) out.destroy(error);
        else {
          out.write(chunk);
          if (final) out.end();
        }
      });
      // Statements of one year mostly print the same logo: each image is read once.
      const logos = new Map<string, Promise<Buffer | undefined>>();
      const logoOf = (row: (typeof statements)[number]) => {
        const url = (row.organization as { logo_url?: string | null }).logo_url ?? "";
        if (!logos.has(url)) logos.set(url, receiptLogo(db, row));
        return logos.get(url);
      };
      (async () => {
        for (const row of statements) {
          const pdf = await receiptPdf(receiptContent(row, row.locale as Locale), await logoOf(row));
          const file = new ZipPassThrough(`statement-${receiptCode(row)}.pdf`);
          zip.add(file);
          file.push(pdf, true);
        }
        zip.end();
      })().catch((error: unknown) => out.destroy(error as Error));
      return reply
        .header("content-type", "application/zip")
        .header("content-disposition", `attachment; filename="${slug}-statements-${year}.zip"`)
        .header("cache-control", "private, no-store")
        .send(out);
    },
  );

  // The audit log, filtered as the panel shows it: owners and admins only, newest first.
  const AUDIT_COLUMNS = [
    "id",
    "create_date",
    "type",
    "summary",
    "actor_type",
    "actor_id",
    "actor_label",
    "resource_type",
    "resource_id",
    "ip",
    "user_agent",
    "request_id",
    "changes",
  ] as const;
  const optional = (schema: TSchema) => Type.Optional(schema);
  app.get(
    "/admin/export/audit.csv",
    {
      schema: {
        hide: true,
        querystring: Type.Object(
          {
            organization: Type.String({ minLength: 1, maxLength: 100 }),
            actor_type: optional(Type.String({ maxLength: 20 })),
            actor_id: optional(Type.Integer({ minimum: 1 })),
            type: optional(Type.String({ maxLength: 2000 })),
            resource_type: optional(Type.String({ maxLength: 40 })),
            resource_id: optional(Type.Integer({ minimum: 1 })),
            from: optional(Type.String({ maxLength: 40 })),
            to: optional(Type.String({ maxLength: 40 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const {
        organization: slug,
        type,
        ...query
      } = request.query as AuditQuery & { organization: string; type?: string };
      const { membership, session } = await panelMember(db, request);
      if (membership.role !== "owner" && membership.role !== "admin") {
        throw new AppError("insufficient_role", "Only owners and admins read the audit log");
      }
      // Checked before the answer starts, so bad filters are still a clean 400.
      const filters = auditFiltersOf({ ...query, type: type ? type.split(",").map((item) => item.trim()) : null });
      async function* rows() {
        yield `${AUDIT_COLUMNS.join(",")}\r\n`;
        // The sentences in the member's language, as the panel shows them.
        const locale = negotiateLocale({
          saved: session?.locale,
          acceptLanguage: request.headers["accept-language"],
          fallback: membership?.locale,
        });
        for await (const page of auditLogPages(db, membership?.id ?? 0, filters, locale)) {
          yield page
            .map((entry) => {
              const cells: Record<(typeof AUDIT_COLUMNS)[number], unknown> = {
                ...entry,
                changes: entry.changes.map((change) => `${change.field}: ${change.before} → ${change.after}`),
              };
              return `${AUDIT_COLUMNS.map((column) => csvCell(cells[column])).join(",")}\r\n`;
            })
            .join("");
        }
      }
      const date = new Date().toISOString().slice(0, 10);
      return reply
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="${slug}-audit-log-${date}.csv"`)
        .header("cache-control", "private, no-store")
        .send(Readable.from(rows()));
    },
  );
}
