import type { PGlite } from "@electric-sql/pglite";

/**
 * PGlite is one connection. Its own locks serialise whole transactions of its in-process users,
 * but the wire protocol socket (pglite-socket) runs each protocol message alone, so a psql
 * transaction would take in the server's queries and a server transaction psql's messages.
 * The gate is one lock above both: the server's queries and transactions take it for their whole
 * length, a socket client from its first message until its backend is idle again (docs/embedded-database.md).
 */
export class PgliteGate {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;

  /** Resolves with the function that releases the gate, once it is ours. */
  async acquire(): Promise<() => void> {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.#tail;
    this.#tail = previous.then(() => released);
    this.#waiting++;
    await previous;
    this.#waiting--;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** How many are waiting for the gate (the socket's measurements report it). */
  get waiting(): number {
    return this.#waiting;
  }
}

const gates = new WeakMap<PGlite, { gate: PgliteGate; raw: PGlite }>();

/** The gate and the instance behind a gated one (undefined: not gated, nothing else may reach it). */
export function gateOf(pglite: PGlite): { gate: PgliteGate; raw: PGlite } | undefined {
  return gates.get(pglite);
}

/**
 * The instance as the application's Drizzle (and Database.pglite) sees it: each query, exec, whole
 * transaction and data-directory dump passes the gate. (Queries inside a transaction go through the
 * transaction object, already inside.)
 */
export function gatedPglite(pglite: PGlite): PGlite {
  const gate = new PgliteGate();
  const gated: Record<string | symbol, unknown> = {
    query: (...args: Parameters<PGlite["query"]>) => gate.run(() => pglite.query(...args)),
    exec: (...args: Parameters<PGlite["exec"]>) => gate.run(() => pglite.exec(...args)),
    transaction: (...args: Parameters<PGlite["transaction"]>) => gate.run(() => pglite.transaction(...args)),
    // A copy of the files taken between a socket client's statements would hold its unfinished transaction.
    dumpDataDir: (...args: Parameters<PGlite["dumpDataDir"]>) => gate.run(() => pglite.dumpDataDir(...args)),
  };
  const proxy = new Proxy(pglite, {
    get(target, property) {
      if (property in gated) return gated[property];
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  gates.set(proxy, { gate, raw: pglite });
  return proxy;
}
