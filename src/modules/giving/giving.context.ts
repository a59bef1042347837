import type { Db } from "../../db/client.js";
import type { ProcessorRegistry } from "../../payments/processors/index.js";
import type { DocumentLinks } from "../documents/document-links.js";
import type { CardTestingGuard } from "./card-testing.service.js";

/**
 * Named points of the checkout completion, for tests that inject a failure between steps: after the
 * attempt is recorded, after the processor answered, and inside the settling transaction.
 */
export type CompletionStep = "record" | "charge" | "supporter" | "payment_method" | "donation" | "payment" | "checkout";

export interface GivingContext {
  db: Db;
  links: DocumentLinks;
  /** The payment adapters of each organization (sandbox or its Stripe account, bank transfer). */
  processors: ProcessorRegistry;
  checkoutTtlSeconds: number;
  /** An attempt left PENDING longer than this is reconciled (asked of the processor and settled). */
  pendingTimeoutSeconds: number;
  /** Caps, decline floor and challenge against card testing on the public checkout. */
  guard: CardTestingGuard;
  /** Test hook: called after each completion step; a throw stops there (inside the settling transaction, rolls it back). */
  afterStep?: (step: CompletionStep) => void | Promise<void>;
}
