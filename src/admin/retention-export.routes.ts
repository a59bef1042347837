import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { requirePermission } from "../auth/actor.js";
import type { Db } from "../db/client.js";
import { csvCell } from "../http/csv.js";
import { SEGMENTS } from "../modules/retention/retention.repo.js";
import {
  MAX_YEAR,
  MIN_YEAR,
  type RetentionSupporter,
  retentionReport,
  retentionSegmentPages,
  retentionYear,
} from "../modules/retention/retention.service.js";
import { panelMember } from "./panel-member.js";

const COLUMNS = [
  "supporter_id",
  "name",
  "email",
  "first_gift_date",
  "last_gift_date",
  "last_year_total",
  "lifetime_total",
  "currency",
] as const;

/** Minor units as the decimal amount a spreadsheet reads (1234 → 12.34 in EUR), exactly. */
function decimal(minor: number, exponent: number): string {
  if (exponent === 0) return String(minor);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, "0");
  return `${minor < 0 ? "-" : ""}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/**
 * The panel's CSV download of a retention list (LYBUNT, SYBUNT, first-time donors) of a year, as
 * the Retention page shows it: same member session and organization as the other exports.
 */
export function retentionExportRoutes(app: FastifyInstance, db: Db) {
  for (const segment of SEGMENTS) {
    app.get(
      `/admin/export/retention-${segment}.csv`,
      {
        schema: {
          hide: true,
          querystring: Type.Object(
            {
              organization: Type.String({ minLength: 1, maxLength: 100 }),
              year: Type.Optional(Type.Integer({ minimum: MIN_YEAR, maximum: MAX_YEAR })),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (request, reply) => {
        const { organization: slug, year: asked } = request.query as { organization: string; year?: number };
        const { actor, scope } = await panelMember(db, request, "supporters:read");
        requirePermission(actor, "donations:read");
        const year = retentionYear(scope, asked);
        const { currency, minor_unit_exponent: exponent } = await retentionReport(db, scope, year);
        const line = (row: RetentionSupporter) => {
          const cells: Record<(typeof COLUMNS)[number], unknown> = {
            supporter_id: row.id,
            name: row.name,
            email: row.email,
            first_gift_date: row.first_gift_date,
            last_gift_date: row.last_gift_date,
            last_year_total: decimal(row.last_year_total, exponent),
            lifetime_total: decimal(row.lifetime_total, exponent),
            currency,
          };
          return `${COLUMNS.map((column) => csvCell(cells[column])).join(",")}\r\n`;
        };
        async function* rows() {
          yield `${COLUMNS.join(",")}\r\n`;
          for await (const page of retentionSegmentPages(db, scope, year, segment)) yield page.map(line).join("");
        }
        return reply
          .header("content-type", "text/csv; charset=utf-8")
          .header("content-disposition", `attachment; filename="${slug}-retention-${segment}-${year}.csv"`)
          .header("cache-control", "private, no-store")
          .send(Readable.from(rows()));
      },
    );
  }
}
