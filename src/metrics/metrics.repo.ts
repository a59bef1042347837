import { type SQL, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";

/*
 * Scrape-time aggregates across every organization. Each one reads a partial index of the work it
 * counts (so it costs what is waiting, not the table), or a per-organization create_date index
 * over a 24-hour window, reached by joining organizations (as closeOpenCheckoutsBefore does).
 */

async function rows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = await db.execute(query);
  return (result as unknown as { rows: T[] }).rows;
}

export interface DueWork {
  queue: string;
  due: number;
  /** When the oldest item became due (epoch seconds), null when none is. */
  oldestDueEpoch: number | null;
}

type DueRow = { queue: string; due: number; oldest: number | null };

const toDueWork = (row: DueRow): DueWork => ({
  queue: row.queue,
  due: Number(row.due),
  oldestDueEpoch: row.oldest === null ? null : Number(row.oldest),
});

/**
 * What the worker would pick up now, by queue: queued jobs by kind (renewals), OPEN checkouts past
 * their TTL, charges / refunds / checkout attempts PENDING past the reconciler's timeout, and due
 * outbox emails (queued, or "sending" whose lease ran out).
 */
export async function selectDueWork(
  db: Executor,
  options: { now: Date; checkoutTtlSeconds: number; pendingTimeoutSeconds: number },
): Promise<DueWork[]> {
  const now = options.now.toISOString();
  const checkoutCutoff = new Date(options.now.getTime() - options.checkoutTtlSeconds * 1000).toISOString();
  const pendingCutoff = new Date(options.now.getTime() - options.pendingTimeoutSeconds * 1000).toISOString();
  const result = await rows<DueRow>(
    db,
    sql`
      select kind as queue, count(*)::int as due, extract(epoch from min(run_date))::float8 as oldest
        from jobs where state = 'queued' and run_date <= ${now}::timestamptz group by kind
      union all
      select 'checkout_expiry', count(*)::int,
             extract(epoch from min(c.create_date) + make_interval(secs => ${options.checkoutTtlSeconds}))::float8
        from checkouts c join organizations o on c.organization_id = o.id
        where c.state = 'OPEN' and c.create_date <= ${checkoutCutoff}::timestamptz
      union all
      select 'reconcile_checkout_attempt', count(*)::int,
             extract(epoch from min(update_date) + make_interval(secs => ${options.pendingTimeoutSeconds}))::float8
        from checkout_attempts where state = 'PENDING' and update_date <= ${pendingCutoff}::timestamptz
      union all
      select 'reconcile_payment', count(*)::int,
             extract(epoch from min(update_date) + make_interval(secs => ${options.pendingTimeoutSeconds}))::float8
        from payments
        where state = 'PENDING' and idempotency_key is not null and update_date <= ${pendingCutoff}::timestamptz
      union all
      select 'reconcile_refund', count(*)::int,
             extract(epoch from min(update_date) + make_interval(secs => ${options.pendingTimeoutSeconds}))::float8
        from refunds where state = 'PENDING' and update_date <= ${pendingCutoff}::timestamptz
      union all
      select 'email', count(*)::int, extract(epoch from min(next_attempt_date))::float8
        from outbox_messages where state in ('queued', 'sending') and next_attempt_date <= ${now}::timestamptz`,
  );
  return result.map(toDueWork);
}

export interface StateCount {
  state: string;
  count: number;
}

/** The outbox proper: every message not yet settled (queued, or leased for delivery), due or not. */
export async function selectUnsettledEmails(db: Executor): Promise<StateCount[]> {
  const result = await rows<StateCount>(
    db,
    sql`select state, count(*)::int as count from outbox_messages
        where state in ('queued', 'sending') group by state`,
  );
  return result.map((row) => ({ state: row.state, count: Number(row.count) }));
}

/** Messages created since `since`, by state (sent, captured, failed, cancelled and the unsettled ones). */
export async function selectRecentEmails(db: Executor, since: Date): Promise<StateCount[]> {
  const result = await rows<StateCount>(
    db,
    sql`select m.state, count(*)::int as count
        from outbox_messages m join organizations o on m.organization_id = o.id
        where m.create_date >= ${since.toISOString()}::timestamptz group by m.state`,
  );
  return result.map((row) => ({ state: row.state, count: Number(row.count) }));
}

export interface ProcessorStateCount extends StateCount {
  processor: string;
}

type ProcessorRow = { processor: string; state: string; count: number };
const toProcessorCount = (row: ProcessorRow): ProcessorStateCount => ({
  processor: row.processor,
  state: row.state,
  count: Number(row.count),
});

/** Payments created since `since`, by the processor of their method (none: manual) and state. */
export async function selectRecentPayments(db: Executor, since: Date): Promise<ProcessorStateCount[]> {
  const result = await rows<ProcessorRow>(
    db,
    sql`select coalesce(pm.processor, 'manual') as processor, p.state, count(*)::int as count
        from payments p join organizations o on p.organization_id = o.id
        left join payment_methods pm on pm.organization_id = p.organization_id and pm.id = p.payment_method_id
        where p.create_date >= ${since.toISOString()}::timestamptz
        group by 1, 2`,
  );
  return result.map(toProcessorCount);
}

/** Checkout completion attempts (declines included) created since `since`, by processor and state. */
export async function selectRecentCheckoutAttempts(db: Executor, since: Date): Promise<ProcessorStateCount[]> {
  const result = await rows<ProcessorRow>(
    db,
    sql`select a.processor, a.state, count(*)::int as count
        from checkout_attempts a join organizations o on a.organization_id = o.id
        where a.create_date >= ${since.toISOString()}::timestamptz
        group by 1, 2`,
  );
  return result.map(toProcessorCount);
}
