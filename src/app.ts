import { randomBytes } from "node:crypto";
import cookie from "@fastify/cookie";
import formbody from "@fastify/formbody";
import underPressure from "@fastify/under-pressure";
import Fastify, { type FastifyInstance } from "fastify";
import { accountRoutes } from "./admin/account.routes.js";
import { adminExportRoutes } from "./admin/admin-export.routes.js";
import { adminPageRoutes } from "./admin/admin-pages.routes.js";
import { adminSessionRoutes } from "./admin/admin-session.routes.js";
import { forgotPasswordRoutes } from "./admin/forgot-password.routes.js";
import { passkeyRoutes } from "./admin/passkeys.routes.js";
import { retentionExportRoutes } from "./admin/retention-export.routes.js";
import { secondFactorRoutes } from "./admin/second-factor.routes.js";
import { stepUpRoutes } from "./admin/step-up.routes.js";
import { welcomeRoutes } from "./admin/welcome.routes.js";
import type { Config } from "./config.js";
import type { Database } from "./db/client.js";
import { AppError } from "./errors/app-error.js";
import { eventRoutes } from "./events/events.routes.js";
import { GRAPHQL_PATH, graphqlRoutes } from "./graphql/graphql.routes.js";
import { answerClientError } from "./http/client-errors.js";
import { registerCors } from "./http/cors.js";
import { faviconRoutes } from "./http/favicon.routes.js";
import { healthRoutes } from "./http/health.routes.js";
import { containsNul } from "./http/nul.js";
import { registerOpenApi } from "./http/openapi.js";
import { RETRY_AFTER_SECONDS, sendProblem, toProblem } from "./http/problem.js";
import { ProblemSchema } from "./http/problem-schema.js";
import { loggerOptions } from "./http/request-log.js";
import { sameOriginGuard } from "./http/same-origin.js";
import { buildWireValidator, markFormBody } from "./http/wire-validator.js";
import { imageRoutes } from "./images/images.routes.js";
import { registerRateLimits } from "./limits/rate-limit.hooks.js";
import { type LimitStore, openLimitStore } from "./limits/rate-limiter.js";
import { metricsRoutes, registerMetrics } from "./metrics/metrics.routes.js";
import { isDeclaredOrigin } from "./modules/applications/application-origins.js";
import { campaignRoutes } from "./modules/campaigns/campaigns.routes.js";
import { coverRoutes } from "./modules/campaigns/cover.routes.js";
import { checkoutRoutes } from "./modules/checkouts/checkouts.routes.js";
import { hideDocumentLinks } from "./modules/documents/document-access.js";
import { loadDocumentLinks } from "./modules/documents/document-links.js";
import { documentRoutes } from "./modules/documents/documents.routes.js";
import { donationActionRoutes } from "./modules/donations/donation-actions.routes.js";
import { donationRoutes } from "./modules/donations/donations.routes.js";
import { donorPortalRoutes } from "./modules/donor-portal/donor-portal.routes.js";
import { giftRoutes } from "./modules/donor-portal/gift.routes.js";
import { loadCardTestingGuard } from "./modules/giving/card-testing.service.js";
import { donatePageRoutes } from "./modules/giving/donate-page.routes.js";
import { embedRoutes } from "./modules/giving/embed.routes.js";
import type { GivingContext } from "./modules/giving/giving.context.js";
import { publicCheckoutRoutes } from "./modules/giving/public-checkout.routes.js";
import { importRoutes } from "./modules/imports/imports.routes.js";
import { logoRoutes } from "./modules/legal-profile/logo.routes.js";
import { paymentActionRoutes } from "./modules/payments/payment-actions.routes.js";
import { paymentRoutes } from "./modules/payments/payments.routes.js";
import { stripeWebhookRoutes } from "./modules/payments/stripe-webhooks.routes.js";
import { receiptRoutes } from "./modules/receipts/receipts.routes.js";
import { supporterRoutes } from "./modules/supporters/supporters.routes.js";
import { webhookRoutes } from "./modules/webhooks/webhooks.routes.js";
import { authorizeRoutes } from "./oauth/authorize.routes.js";
import { OAuthError } from "./oauth/oauth-error.js";
import { oauthPasskeyRoutes } from "./oauth/passkey.routes.js";
import { tokenRoutes } from "./oauth/token.routes.js";
import { loadProcessorRegistry } from "./payments/processors/index.js";
import { loadSecretBox } from "./secrets/secret-box.js";

const OAUTH_ENDPOINTS = new Set(["/oauth/token/", "/oauth/revoke/", "/oauth/introspect/"]);

/** A malformed request to an OAuth endpoint (bad media type, body too large) answers in RFC 6749 form. */
function asOAuthError(error: unknown): OAuthError | null {
  const status = error instanceof AppError ? error.status : (error as { statusCode?: number })?.statusCode;
  if (typeof status !== "number" || status < 400 || status >= 500) return null;
  return new OAuthError("invalid_request", (error as Error).message);
}

export interface AppDependencies {
  config: Config;
  database: Database;
  /** Rate-limit counters; by default in the database, or in Redis when REDIS_URL is set. */
  limits?: LimitStore;
  /** Test-only hooks: inject a failure between the steps of a checkout completion; hold the sign-in form's work. */
  testHooks?: {
    afterCompletionStep?: GivingContext["afterStep"];
    /** Awaited once the donor sign-in form answered, before it looks the email up. */
    beforeSignInLinkQueued?: () => Promise<void> | void;
  };
}

/** Builds the whole HTTP application without listening, so tests start it on their own port. */
export async function buildApp({
  config,
  database,
  limits: givenLimits,
  testHooks,
}: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    ...loggerOptions(config),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Unique across processes and restarts: events keep the id of the request that made a change.
    genReqId: () => `req_${randomBytes(12).toString("base64url")}`,
    bodyLimit: 1024 * 1024,
    // JSON bodies take JSON types; URL, header and form strings are numbers only in decimal form.
    // (Fastify's type for this factory describes Ajv's compile; at run time it gets the route's schema and part.)
    schemaController: { compilersFactory: { buildValidator: buildWireValidator as never } },
    // Requests arriving while the server closes get a problem body (hook below), not Fastify's own JSON.
    return503OnClosing: false,
    // Slow clients (headers or body trickled) are answered 408 and cut off; Node checks every 500 ms.
    requestTimeout: config.requestTimeoutSeconds * 1000,
    keepAliveTimeout: config.keepAliveTimeoutSeconds * 1000,
    http: {
      headersTimeout: config.headersTimeoutSeconds * 1000,
      requestTimeout: config.requestTimeoutSeconds * 1000,
      connectionsCheckingInterval: 500,
    },
    // What Node's parser refuses (431, malformed request line or chunking, timeouts) as problem+json too.
    clientErrorHandler: answerClientError,
    // The client address is the socket's unless TRUST_PROXY names the proxies whose X-Forwarded-For counts.
    trustProxy: config.trustProxy ?? false,
    // Router-level refusals (a malformed percent-encoding, an over-long path segment) as problem bodies too.
    frameworkErrors: (error, request, reply) => {
      // An over-long path segment is 414 (FST_ERR_MAX_PARAM_LENGTH); a malformed one 400.
      const code = (error as { statusCode?: number }).statusCode === 414 ? "uri_too_long" : "invalid_request";
      const detail = `Invalid request URL: ${error.message.replace(/^'[^']*' /, "")}`;
      sendProblem(reply, toProblem(new AppError(code, detail), request));
    },
  });

  app.setErrorHandler((error, request, reply) => {
    const oauthError =
      error instanceof OAuthError
        ? error
        : OAUTH_ENDPOINTS.has(request.routeOptions.url ?? "")
          ? asOAuthError(error)
          : null;
    if (oauthError) {
      return reply
        .code(oauthError.status)
        .headers({ "cache-control": "no-store", pragma: "no-cache", ...oauthError.headers })
        .send(oauthError.toJSON());
    }
    return sendProblem(reply, toProblem(error, request));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      toProblem(
        new AppError("route_not_found", `No route for ${request.method} ${request.url.split("?")[0]}`),
        request,
      ),
    ),
  );
  const limits = givenLimits ?? openLimitStore({ db: database.db, redisUrl: config.redisUrl });
  app.addHook("onClose", async () => {
    await limits.close();
  });
  app.addSchema(ProblemSchema);
  const metrics = registerMetrics(app, config, database);
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", async () => {
    if (closing) {
      throw new AppError("shutting_down", "The server is shutting down; retry shortly", {
        headers: { "retry-after": String(RETRY_AFTER_SECONDS), connection: "close" },
      });
    }
  });
  // Shed load early when the event loop lags: a quick 503 beats a slow answer to everyone.
  await app.register(underPressure, {
    maxEventLoopDelay: config.maxEventLoopDelayMs,
    sampleInterval: config.eventLoopSampleIntervalMs,
    pressureHandler: async () => {
      throw new AppError("overloaded", "The server is overloaded; retry shortly", {
        headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
      });
    },
  });
  // PostgreSQL text cannot hold NUL; refuse it up front rather than fail in the database.
  // GraphQL checks its own parameters, to answer in the GraphQL error shape.
  app.addHook("preValidation", async (request) => {
    markFormBody(request);
    if (request.routeOptions.url === GRAPHQL_PATH) return;
    if (containsNul(request.query) || containsNul(request.body) || containsNul(request.params)) {
      throw new AppError("invalid_request", "The request contains a NUL character, which no field accepts");
    }
  });
  // No CORS for cookies; cookie routes refuse state changes from other origins; tokens get CORS for their app.
  app.addHook("onRequest", sameOriginGuard(config));
  registerCors(app, (origin, applicationId) => isDeclaredOrigin(database.db, origin, applicationId));
  // Links to receipts and statements follow the permissions of the personal data they open.
  app.addHook("preSerialization", async (request, _reply, payload) =>
    request.auth ? hideDocumentLinks(payload, request.auth.permissions) : payload,
  );
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(cookie);
  registerRateLimits(app, limits, config.rateLimits);
  await registerOpenApi(app, config);

  healthRoutes(app, database);
  faviconRoutes(app);
  imageRoutes(app, database.db);
  metricsRoutes(app, metrics, config);
  const { db } = database;
  campaignRoutes(app, db);
  supporterRoutes(app, db);
  donationRoutes(app, db);
  paymentRoutes(app, db);
  eventRoutes(app, db);
  webhookRoutes(app, db, {
    secrets: loadSecretBox({ encryptionKey: config.encryptionKey, dataDir: config.dataDir }),
    destinations: { allowPrivateNetworks: config.webhookAllowPrivateNetworks },
  });
  checkoutRoutes(app, db);
  const giving: GivingContext = {
    db,
    links: await loadDocumentLinks(db, config.baseUrl),
    processors: loadProcessorRegistry(db, config),
    checkoutTtlSeconds: config.checkoutTtlSeconds,
    pendingTimeoutSeconds: config.paymentPendingTimeoutSeconds,
    guard: await loadCardTestingGuard(db, limits, config.cardTesting),
    afterStep: testHooks?.afterCompletionStep,
  };
  receiptRoutes(app, db, giving.links);
  publicCheckoutRoutes(app, giving);
  documentRoutes(app, giving);
  donatePageRoutes(app, giving);
  embedRoutes(app);
  giftRoutes(
    app,
    giving,
    donorPortalRoutes(app, {
      db,
      config,
      links: giving.links,
      limits,
      beforeSignInLinkQueued: testHooks?.beforeSignInLinkQueued,
    }),
  );
  paymentActionRoutes(app, giving);
  donationActionRoutes(app, giving);
  await stripeWebhookRoutes(app, giving);
  const signInThrottle = { store: limits, rules: config.rateLimits };
  // Authenticator apps' secrets are sealed with one key for every sign-in surface (memory://: one per process).
  const secondFactors = {
    db,
    secrets: loadSecretBox({ encryptionKey: config.encryptionKey, dataDir: config.dataDir }),
    throttle: signInThrottle,
  };
  tokenRoutes(app, db, config);
  authorizeRoutes(app, db, config, secondFactors);
  oauthPasskeyRoutes(app, db, config, signInThrottle);
  graphqlRoutes(app, db, config, giving);
  adminSessionRoutes(app, db, config, signInThrottle);
  secondFactorRoutes(app, { ...secondFactors, config });
  passkeyRoutes(app, db, config, signInThrottle);
  accountRoutes(app, db, config, signInThrottle);
  stepUpRoutes(app, secondFactors);
  welcomeRoutes(app, db, config, signInThrottle);
  forgotPasswordRoutes(app, db, config, signInThrottle);
  adminExportRoutes(app, db);
  retentionExportRoutes(app, db);
  await logoRoutes(app, db, config.baseUrl);
  await coverRoutes(app, db, config.baseUrl);
  await importRoutes(app, db);
  await adminPageRoutes(app, db, config.authUrl);
  return app;
}
