import { AsyncLocalStorage } from "node:async_hooks";
import { AppError } from "../errors/app-error.js";

interface Budget {
  readonly max: number;
  spent: number;
}

const current = new AsyncLocalStorage<Budget>();

/** Runs work (one GraphQL request) that may run at most `max` SQL statements. */
export function withStatementBudget<T>(max: number, work: () => Promise<T>): Promise<T> {
  return current.run({ max, spent: 0 }, work);
}

/** Runs work outside any request's budget (what a request leaves to run after its answer). */
export function outsideStatementBudget<T>(work: () => T): T {
  return current.exit(work);
}

/**
 * Called by the database client before every statement: past the budget the statement is not
 * sent, and the resolver that asked for it fails with a client error instead of holding the pool.
 */
export function spendStatement() {
  const budget = current.getStore();
  if (!budget) return;
  budget.spent += 1;
  if (budget.spent > budget.max) {
    throw new AppError(
      "too_many_statements",
      `This request needs more than ${budget.max} database statements; ask for fewer fields or aliases, or split it`,
    );
  }
}
