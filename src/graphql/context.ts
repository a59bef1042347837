import DataLoader from "dataloader";
import { type Actor, type MemberPermission, requirePermission } from "../auth/actor.js";
import type { Permission } from "../auth/permissions.js";
import type { Scope } from "../auth/scope.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import type { Locale } from "../i18n/locales.js";
import { findCampaignRowsByIds } from "../modules/campaigns/campaigns.repo.js";
import { campaignToWire } from "../modules/campaigns/campaigns.service.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { findDonationRowsByIds } from "../modules/donations/donations.repo.js";
import { donationToWire } from "../modules/donations/donations.service.js";
import type { CardTestingGuard } from "../modules/giving/card-testing.service.js";
import { findPaymentMethodsByIds, paymentMethodToWire } from "../modules/payment-methods/payment-methods.repo.js";
import { findPaymentRowsByIds } from "../modules/payments/payments.repo.js";
import { paymentToWire } from "../modules/payments/payments.service.js";
import { listPaymentRefunds, type RefundRow } from "../modules/payments/refunds.repo.js";
import { findSupporterRowsByIds } from "../modules/supporters/supporters.repo.js";
import { supporterToWire } from "../modules/supporters/supporters.service.js";
import type { ProcessorRegistry } from "../payments/processors/index.js";

export interface GraphQLContext {
  db: Db;
  config: Config;
  links: DocumentLinks;
  guard: CardTestingGuard;
  processors: ProcessorRegistry;
  actor: Actor;
  scope: Scope & { organizationSlug: string };
  /** The reader's language, for the words the API writes (the audit log's sentences): a member's
   * saved choice, then Accept-Language, then the organization's; an application's Accept-Language. */
  locale: Locale;
  /** Work to run once the answer is sent, outside the request's statement budget (logged if it fails). */
  afterResponse: (task: () => Promise<void>) => void;
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
    /** A payment's row: what the wire shape leaves out (refunded amount, dispute). */
    paymentRow: byId(
      (ids) => findPaymentRowsByIds(db, organizationId, ids),
      (row) => row,
    ),
    /** A payment's refunds, oldest first. */
    paymentRefunds: new DataLoader<number, RefundRow[]>(async (ids) => {
      const rows = await listPaymentRefunds(db, organizationId, ids);
      return ids.map((id) => rows.filter((row) => row.paymentId === id));
    }),
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

/** Refuses (403 insufficient_scope) unless the caller may; the rule is src/auth's, as for REST. */
export function authorize(context: GraphQLContext, permission: Permission | MemberPermission) {
  requirePermission(context.actor, permission);
}
