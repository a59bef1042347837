import { createHash } from "node:crypto";
import type { MethodInput, Processor } from "./processor.js";

/**
 * Bank transfer, cash or cheque: nothing is charged online. The payment stays PENDING until an
 * admin marks it paid, and offline donations are recorded directly as paid.
 */
export const manualProcessor: Processor = {
  name: "manual",
  title: "Bank transfer",
  capabilities: { oneOff: true, recurring: false, refunds: true },

  tokenize(_input: MethodInput) {
    return { label: "Bank transfer", reference: "manual" };
  },

  async charge(request) {
    return {
      state: "PENDING",
      intentId: `man_pi_${createHash("sha256").update(request.idempotencyKey).digest("hex").slice(0, 24)}`,
    };
  },

  async refund() {
    // The money goes back by hand; the platform records it.
  },
};
