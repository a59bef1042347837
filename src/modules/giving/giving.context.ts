import type { Db } from "../../db/client.js";
import type { DocumentLinks } from "../documents/document-links.js";
import type { CardTestingGuard } from "./card-testing.service.js";

/** Named points of the checkout completion, for tests that inject a failure between steps. */
export type CompletionStep = "supporter" | "payment_method" | "donation" | "payment" | "checkout";

export interface GivingContext {
  db: Db;
  links: DocumentLinks;
  checkoutTtlSeconds: number;
  /** Caps, decline floor and challenge against card testing on the public checkout. */
  guard: CardTestingGuard;
  /** Test hook: called after each completion step inside the transaction; a throw rolls it all back. */
  afterStep?: (step: CompletionStep) => void | Promise<void>;
}
