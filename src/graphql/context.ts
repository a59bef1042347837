import DataLoader from "dataloader";
import type { Scope } from "../auth/scope.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { campaigns, donations, paymentMethods, payments, supporters } from "../db/schema.js";
import { selectTenantRowsByIds } from "../db/tenant-rows.js";
import { AppError } from "../errors/app-error.js";
import { campaignToWire } from "../modules/campaigns/campaigns.service.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { donationToWire } from "../modules/donations/donations.service.js";
import type { CardTestingGuard } from "../modules/giving/card-testing.service.js";
import { paymentMethodToWire } from "../modules/payment-methods/payment-methods.repo.js";
import { paymentToWire } from "../modules/payments/payments.service.js";
import { supporterToWire } from "../modules/supporters/supporters.service.js";

/** Who is asking: an installed application (by bearer token) or a member (by session). */
export type Actor =
  | { kind: "application"; applicationId: number; permissions: string[] }
  | { kind: "member"; userId: number; email: string; role: "owner" | "admin" | "member" };

export interface GraphQLContext {
  db: Db;
  config: Config;
  links: DocumentLinks;
  guard: CardTestingGuard;
  actor: Actor;
  scope: Scope & { organizationSlug: string };
  loaders: ReturnType<typeof createLoaders>;
}

function byId<Row extends { id: number }, Wire>(
  load: (ids: readonly number[]) => Promise<Row[]>,
  toWire: (row: Row) => Wire,
) {
  return new DataLoader<number, Wire | null>(async (ids) => {
    const rows = new Map((await load(ids)).map((row) => [row.id, toWire(row)]));
    return ids.map((id) => rows.get(id) ?? null);
  });
}

/** Per-request batching: a page of records resolves each relation in one query. */
export function createLoaders(db: Db, organizationId: number) {
  const methods = byId((ids) => selectTenantRowsByIds(db, paymentMethods, organizationId, ids), paymentMethodToWire);
  return {
    campaign: byId((ids) => selectTenantRowsByIds(db, campaigns, organizationId, ids), campaignToWire),
    supporter: byId((ids) => selectTenantRowsByIds(db, supporters, organizationId, ids), supporterToWire),
    donation: byId((ids) => selectTenantRowsByIds(db, donations, organizationId, ids), donationToWire),
    paymentMethod: methods,
    payment: new DataLoader<number, ReturnType<typeof paymentToWire> | null>(async (ids) => {
      const rows = await selectTenantRowsByIds(db, payments, organizationId, ids);
      const methodRows = await selectTenantRowsByIds(
        db,
        paymentMethods,
        organizationId,
        rows.map((row) => row.paymentMethodId).filter((id): id is number => id !== null),
      );
      const methodById = new Map(methodRows.map((row) => [row.id, row]));
      const byPaymentId = new Map(
        rows.map((row) => [row.id, paymentToWire(row, methodById.get(row.paymentMethodId ?? 0))]),
      );
      return ids.map((id) => byPaymentId.get(id) ?? null);
    }),
  };
}

const READ_ROLES = ["owner", "admin", "member"];
const WRITE_ROLES = ["owner", "admin"];

/** Applications are limited by their permissions, members by their role. */
export function can(context: GraphQLContext, permission: string): boolean {
  const { actor } = context;
  return actor.kind === "application"
    ? actor.permissions.includes(permission)
    : (permission.endsWith(":read") ? READ_ROLES : WRITE_ROLES).includes(actor.role);
}

export function authorize(context: GraphQLContext, permission: string) {
  const { actor } = context;
  if (!can(context, permission)) {
    throw new AppError(
      "insufficient_scope",
      actor.kind === "application"
        ? `This application was not granted the "${permission}" permission`
        : `Your role (${actor.role}) does not allow "${permission}"`,
    );
  }
}
