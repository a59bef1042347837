import DataLoader from "dataloader";
import { type Actor, type MemberPermission, requirePermission } from "../auth/actor.js";
import type { Permission } from "../auth/permissions.js";
import type { Scope } from "../auth/scope.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { campaigns, donations, paymentMethods, payments, supporters } from "../db/schema.js";
import { selectTenantRowsByIds } from "../db/tenant-rows.js";
import { campaignToWire } from "../modules/campaigns/campaigns.service.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { donationToWire } from "../modules/donations/donations.service.js";
import type { CardTestingGuard } from "../modules/giving/card-testing.service.js";
import { paymentMethodToWire } from "../modules/payment-methods/payment-methods.repo.js";
import { paymentToWire } from "../modules/payments/payments.service.js";
import { supporterToWire } from "../modules/supporters/supporters.service.js";

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

/** Refuses (403 insufficient_scope) unless the caller may; the rule is src/auth's, as for REST. */
export function authorize(context: GraphQLContext, permission: Permission | MemberPermission) {
  requirePermission(context.actor, permission);
}
