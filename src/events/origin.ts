/**
 * Who made a change and from where, as each event keeps it: the actor (a member of the organization,
 * an installed application, a donor, or the platform itself: the worker or the command line) and,
 * when a request made it, the request's id, address and user agent.
 */
export type EventActor =
  | { type: "user"; user_id: number; label: string }
  | { type: "application"; application_id: number; label: string }
  | { type: "donor"; supporter_id: number | null; label: string }
  | { type: "system"; label: SystemLabel };

/** The platform acting on its own: the worker, the command line, a processor's report, or the server. */
export type SystemLabel = "worker" | "cli" | "processor" | "platform";

export interface EventOrigin {
  actor: EventActor;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

export const systemOrigin = (label: SystemLabel = "platform"): EventOrigin => ({
  actor: { type: "system", label },
  requestId: null,
  ip: null,
  userAgent: null,
});

/** A donor acting without a request the event can name (a checkout settled by its charge's outcome). */
export const donorOrigin = (supporterId: number): EventOrigin => ({
  actor: { type: "donor", supporter_id: supporterId, label: "donor" },
  requestId: null,
  ip: null,
  userAgent: null,
});

/** The parts of an HTTP request an event keeps (Fastify's request has them). */
export interface RequestFacts {
  id: string;
  ip: string;
  headers: Record<string, string | string[] | undefined>;
}

export function requestOrigin(request: RequestFacts, actor: EventActor): EventOrigin {
  const agent = request.headers["user-agent"];
  return {
    actor,
    requestId: request.id,
    ip: request.ip || null,
    userAgent: typeof agent === "string" ? agent.slice(0, 512) : null,
  };
}
