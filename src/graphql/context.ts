import DataLoader from "dataloader";
import type { Scope } from "../auth/scope.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { findCampaignRowsByIds } from "../modules/campaigns/campaigns.repo.js";
import { campaignToWire } from "../modules/campaigns/campaigns.service.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { findDonationRowsByIds } from "../modules/donations/donations.repo.js";
import { donationToWire } from "../modules/donations/donations.service.js";
import type { CardTestingGuard } from "../modules/giving/card-testing.service.js";
import { findPaymentMethodsByIds, paymentMethodToWire } from "../modules/payment-methods/payment-methods.repo.js";
import { findPaymentRowsByIds } from "../modules/payments/payments.repo.js";
import { paymentToWire } from "../modules/payments/payments.service.js";
import { findSupporterRowsByIds } from "../modules/supporters/supporters.repo.js";
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
  const methods = byId(
    async (ids) => [...(await findPaymentMethodsByIds(db, organizationId, [...ids])).values()],
    paymentMethodToWire,
  );
  return {
    campaign: byId((ids) => findCampaignRowsByIds(db, organizationId, ids), campaignToWire),
    supporter: byId((ids) => findSupporterRowsByIds(db, organizationId, ids), supporterToWire),
    donation: byId((ids) => findDonationRowsByIds(db, organizationId, ids), donationToWire),
    paymentMethod: methods,
    payment: new DataLoader<number, ReturnType<typeof paymentToWire> | null>(async (ids) => {
      const rows = await findPaymentRowsByIds(db, organizationId, ids);
      const methodById = await findPaymentMethodsByIds(
        db,
        organizationId,
        rows.map((row) => row.paymentMethodId),
      );
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
      403,
      actor.kind === "application"
        ? `This application was not granted the "${permission}" permission`
        : `Your role (${actor.role}) does not allow "${permission}"`,
    );
  }
}
