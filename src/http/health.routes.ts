import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import type { Database } from "../db/client.js";
import { problemOf, sendProblem } from "./problem.js";

const Health = Type.Object({ status: Type.String() });

export function healthRoutes(app: FastifyInstance, database: Database) {
  app.get(
    "/healthz",
    {
      schema: { tags: ["health"], summary: "The process is up", response: { 200: Health } },
      // Liveness answers even while load is shed: an overloaded process is alive, not to be restarted.
      config: { pressureHandler: () => undefined },
    },
    async () => ({ status: "ok" }),
  );
  app.get(
    "/readyz",
    { schema: { tags: ["health"], summary: "The database answers", response: { 200: Health } } },
    async (request, reply) => {
      try {
        await database.ping();
        return { status: "ready" };
      } catch (error) {
        request.log.warn({ err: error }, "readiness check failed");
        return sendProblem(reply, problemOf(503, "database_unavailable", "The database is not reachable"));
      }
    },
  );
}
