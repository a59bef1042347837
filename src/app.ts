import Fastify, { type FastifyInstance } from "fastify";
import type { Config } from "./config.js";
import type { Database } from "./db/client.js";
import { healthRoutes } from "./http/health.routes.js";
import { registerOpenApi } from "./http/openapi.js";
import { problemOf, sendProblem, toProblem } from "./http/problem.js";
import { ProblemSchema } from "./http/problem-schema.js";
import { campaignRoutes } from "./modules/campaigns/campaigns.routes.js";
import { checkoutRoutes } from "./modules/checkouts/checkouts.routes.js";
import { donationRoutes } from "./modules/donations/donations.routes.js";
import { paymentRoutes } from "./modules/payments/payments.routes.js";
import { supporterRoutes } from "./modules/supporters/supporters.routes.js";

export interface AppDependencies {
  config: Config;
  database: Database;
}

/** Builds the whole HTTP application without listening, so tests start it on their own port. */
export async function buildApp({ config, database }: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.logLevel },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true, allErrors: true } },
    return503OnClosing: true,
  });

  app.setErrorHandler((error, request, reply) => sendProblem(reply, toProblem(error, request)));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      problemOf(404, "route_not_found", `No route for ${request.method} ${request.url.split("?")[0]}`),
    ),
  );
  app.addSchema(ProblemSchema);
  await registerOpenApi(app, config);

  healthRoutes(app, database);
  const { db } = database;
  campaignRoutes(app, db);
  supporterRoutes(app, db);
  donationRoutes(app, db);
  paymentRoutes(app, db);
  checkoutRoutes(app, db);
  return app;
}
