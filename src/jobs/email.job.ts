import type { Db } from "../db/client.js";
import { claimDueMessages, type EmailKind, type OutboxRow, updateMessage } from "../email/outbox.repo.js";
import { messageOf, type RenderDeps, type RenderedEmail, renderOutboxMessage } from "../email/render.js";
import { DeliveryError, type Mailer } from "../email/transport.js";
import { startLoop } from "./loop.js";

/** Waits after a failed attempt: 1 min, 5 min, 15 min, 1 h, 3 h, 6 h, 12 h; the 8th failure is final (about a day). */
const BACKOFF_SECONDS = [60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600];
export const MAX_DELIVERY_ATTEMPTS = BACKOFF_SECONDS.length + 1;
/** A claimed message not settled within this time (the process died mid-delivery) is claimed again. */
const LEASE_SECONDS = 300;

export interface DeliveryDeps {
  mailer: Mailer;
  render: RenderDeps;
}

export interface DeliveryResult {
  sent: number;
  captured: number;
  retried: number;
  failed: number;
  cancelled: number;
}

function storedRendering(row: OutboxRow): RenderedEmail | null {
  if (row.subject === null || row.html === null || row.text === null || row.headers === null) return null;
  return { subject: row.subject, html: row.html, text: row.text, headers: row.headers as Record<string, string> };
}

/**
 * One pass over the outbox: claims due messages (a short transaction), renders each once (kept, so a
 * retry sends the same message with the same Message-ID; a one-time link kept as a placeholder and
 * minted at each attempt), hands it to the SMTP server outside any transaction, then records
 * the answer. A temporary refusal or a dropped connection is retried with
 * backoff; a permanent one (5xx) fails at once with the server's answer. A process that dies between
 * the server's 250 and the record leaves the message leased; it is sent again after the lease.
 */
export async function deliverOutbox(
  db: Db,
  deps: DeliveryDeps,
  options: {
    now?: Date;
    limit?: number;
    /** Only these organizations' messages (tests sharing one database each deliver their own). */
    organizationIds?: readonly number[];
  } = {},
): Promise<DeliveryResult> {
  const result: DeliveryResult = { sent: 0, captured: 0, retried: 0, failed: 0, cancelled: 0 };
  const now = options.now ?? new Date();
  const limit = options.limit ?? 50;
  for (;;) {
    const claimed = await db.transaction((tx) =>
      claimDueMessages(tx, now, new Date(now.getTime() + LEASE_SECONDS * 1000), limit, options.organizationIds),
    );
    for (const row of claimed) await deliverOne(db, deps, row, now, result);
    if (claimed.length < limit) return result;
  }
}

/** Nothing to send any more: the record the message was about, or the person its link was for, is gone. */
async function cancel(db: Db, row: OutboxRow, result: DeliveryResult) {
  result.cancelled += 1;
  await updateMessage(db, row.organizationId, row.id, {
    state: "cancelled",
    lastError: "Nothing to send any more (the record it was about is gone)",
  });
}

async function deliverOne(db: Db, deps: DeliveryDeps, row: OutboxRow, now: Date, result: DeliveryResult) {
  let email = storedRendering(row);
  if (!email) {
    try {
      email = await renderOutboxMessage(db, row, deps.render);
    } catch (error) {
      // A template or data error does not heal by waiting: failed, visible in the Outbox with the reason.
      result.failed += 1;
      await updateMessage(db, row.organizationId, row.id, {
        state: "failed",
        lastError: `Rendering failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 2000),
      });
      return;
    }
    if (!email) return cancel(db, row, result);
    await updateMessage(db, row.organizationId, row.id, { ...email, headers: email.headers });
  }
  const sending = await withLinkToken(db, deps.mailer, row, email);
  if (!sending) return cancel(db, row, result);
  try {
    await deps.mailer.send(row.toAddress, sending);
    const captured = deps.mailer.mode === "capture";
    result[captured ? "captured" : "sent"] += 1;
    await updateMessage(db, row.organizationId, row.id, {
      state: captured ? "captured" : "sent",
      sentDate: new Date(),
      messageId: email.headers["Message-ID"] ?? null,
      lastError: null,
      // Captured, the copy is the only one, on an instance that sends no mail: a donor portal link stays
      // usable (to owners and admins only, see outboxMessageToWire). A sent copy keeps the placeholder.
      ...(captured ? { html: sending.html, text: sending.text } : {}),
    });
  } catch (error) {
    const permanent = error instanceof DeliveryError && error.permanent;
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 2000);
    const final = permanent || row.attempts >= MAX_DELIVERY_ATTEMPTS;
    result[final ? "failed" : "retried"] += 1;
    await updateMessage(db, row.organizationId, row.id, {
      state: final ? "failed" : "queued",
      lastError: reason,
      nextAttemptDate: new Date(now.getTime() + (BACKOFF_SECONDS[row.attempts - 1] ?? 0) * 1000),
    });
  }
}

/**
 * The message as this attempt sends it: its one-time link (DeliveryLink), stored with the
 * placeholder, gets a token minted now for the address it goes to (its hash written before the SMTP
 * call, the token itself never). A retry mints another: no copy in the outbox ever signs anyone in.
 * Captured, a link that must not stay usable in the Outbox is not minted at all. Null: the link is
 * nobody's any more, and the message is cancelled.
 */
async function withLinkToken(db: Db, mailer: Mailer, row: OutboxRow, email: RenderedEmail) {
  const { link } = await messageOf(row.kind as EmailKind);
  if (!link || (!email.html.includes(link.placeholder) && !email.text.includes(link.placeholder))) return email;
  if (mailer.mode === "capture" && !link.capturedCopyKeepsLink) return email;
  const token = await db.transaction((tx) => link.mint(tx, row));
  if (token === null) return null;
  return {
    ...email,
    html: email.html.replaceAll(link.placeholder, token),
    text: email.text.replaceAll(link.placeholder, token),
  };
}

/** Delivers the outbox every `intervalSeconds` until stopped; a failed pass is reported and the loop goes on. */
export function startMailer(db: Db, deps: DeliveryDeps & { intervalSeconds: number; onError(error: unknown): void }) {
  const loop = startLoop(() => deliverOutbox(db, deps), deps);
  return {
    async stop() {
      await loop.stop();
      deps.mailer.close();
    },
  };
}
