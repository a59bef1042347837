import { AppError } from "../errors/app-error.js";

/** decisions.md §8: every allowed transition; anything else is a 409 and changes nothing. */
const TRANSITIONS = {
  checkout: { OPEN: ["CLOSED"], CLOSED: [] },
  donation: {
    draft: ["pending"],
    pending: ["done", "active"],
    active: ["past_due", "revoked"],
    past_due: ["active", "past_due", "revoked"],
    done: ["revoked"],
    revoked: [],
  },
  payment: { PENDING: ["PAID", "FAILED"], PAID: ["REFUNDED"], FAILED: [], REFUNDED: [] },
} as const;

type Machines = typeof TRANSITIONS;
export type Machine = keyof Machines;
export type StateOf<M extends Machine> = keyof Machines[M] & string;

const NAMES: Record<Machine, string> = { checkout: "checkout", donation: "donation", payment: "payment" };

export function canTransition<M extends Machine>(machine: M, from: string, to: StateOf<M>): boolean {
  const allowed = (TRANSITIONS[machine] as Record<string, readonly string[]>)[from];
  return allowed?.includes(to) ?? false;
}

/** Throws the 409 problem for a transition the state machine does not allow. */
export function assertTransition<M extends Machine>(machine: M, id: number, from: string, to: StateOf<M>): void {
  if (!canTransition(machine, from, to)) {
    throw new AppError("invalid_state_transition", `The ${NAMES[machine]} ${id} is ${from}; it cannot become ${to}`);
  }
}
