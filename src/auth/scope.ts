import type { EventOrigin } from "../events/origin.js";

/** The organization a request acts for: every read and write is scoped by it. */
export interface Scope {
  organizationId: number;
  timeZone: string;
  /** Who acts and from where, kept by the events the writes record (absent: the platform itself). */
  origin?: EventOrigin;
}
