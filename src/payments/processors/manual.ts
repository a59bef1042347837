import { createHash } from "node:crypto";
import type { ChargeResult, MethodInput, Processor } from "./processor.js";

const intentId = (idempotencyKey: string) =>
  `man_pi_${createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 24)}`;

/**
 * Bank transfer, cash or cheque: nothing is charged online. The payment stays PENDING until an
 * admin marks it paid, and offline donations are recorded directly as paid.
 */
export const manualProcessor: Processor = {
  name: "manual",
  title: "Bank transfer",
  capabilities: { oneOff: true, recurring: false, refunds: true },
  // A transfer in whatever currency the organization keeps its accounts in.
  supportsCurrency: () => true,
  checkAmount: () => {},

  tokenize(_input: MethodInput) {
    return { label: "Bank transfer", reference: "manual" };
  },

  async charge(request): Promise<ChargeResult> {
    return { state: "PENDING", intentId: intentId(request.idempotencyKey) };
  },

  // Nothing is remote: a transfer is awaited until an admin says it arrived.
  async retrieve(idempotencyKey) {
    return { state: "PENDING", intentId: intentId(idempotencyKey) };
  },

  // The money goes back by hand; the platform records it as done.
  async refund(request) {
    return { state: "SUCCEEDED", refundId: `man_re_${intentId(request.idempotencyKey).slice(7)}` };
  },

  async retrieveRefund() {
    return null;
  },
};
