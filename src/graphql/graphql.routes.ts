import { createHash } from "node:crypto";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ASTVisitor, GraphQLError, type ValidationContext } from "graphql";
import { createYoga, type Plugin } from "graphql-yoga";
import { type Actor, applicationActor, type Role } from "../auth/actor.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { isDatabaseUnavailable } from "../db/database-unavailable.js";
import { outsideStatementBudget, withStatementBudget } from "../db/statement-budget.js";
import { AppError } from "../errors/app-error.js";
import { requestOrigin } from "../events/origin.js";
import { createAfterResponse } from "../http/after-response.js";
import { applicationOrigin, readBearer } from "../http/auth.js";
import { containsNul } from "../http/nul.js";
import { SESSION_COOKIE } from "../http/session-cookie.js";
import { negotiateLocale } from "../i18n/negotiate.js";
import { loadSession } from "../identity/sessions.service.js";
import { findMembershipOfUser } from "../modules/members/members.service.js";
import { authenticateAccessToken } from "../oauth/tokens.service.js";
import { createLoaders, type GraphQLContext } from "./context.js";
import { limitRules } from "./limits.js";
import { schema } from "./schema.js";

export const GRAPHQL_PATH = "/admin/graphql/";
const MAX_QUERY_STRING = 16 * 1024;
const INVALID_TOKEN_HEADERS = { "www-authenticate": 'Bearer realm="api", error="invalid_token"' };

interface ServerContext {
  request: FastifyRequest;
  reply: FastifyReply;
  context: Omit<GraphQLContext, "loaders" | "links" | "guard" | "processors" | "afterResponse"> | null;
}

/** How GraphQL renders an AppError: its code (and validation issues) in extensions. */
const extensionsOf = (error: AppError) => ({ code: error.code, ...(error.errors ? { errors: error.errors } : {}) });

/** A request refused before execution: the GraphQL error shape, with the refusal's own status and headers. */
const sendRefusal = (reply: FastifyReply, error: AppError) =>
  reply
    .code(error.status)
    .headers(error.headers ?? {})
    .type("application/json; charset=utf-8")
    .send({ errors: [{ message: error.message, extensions: extensionsOf(error) }] });

/** A NUL in a string literal of the document would reach PostgreSQL, which cannot store it. */
function nulLiteralRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (node.value.includes("\u0000")) {
        context.reportError(
          new GraphQLError("A string argument contains a NUL character, which no field accepts", {
            nodes: [node],
            extensions: { code: "invalid_request", http: { status: 400 } },
          }),
        );
      }
    },
  };
}

/** Deeper than any document a person or a generator writes; far shallower than the parser's stack. */
const MAX_DOCUMENT_NESTING = 256;

/** How deep a GraphQL document's brackets ({ [ () nest, outside strings, block strings and comments. */
export function nestingOf(source: string): number {
  let depth = 0;
  let deepest = 0;
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === "#") {
      while (index < source.length && source[index] !== "\n" && source[index] !== "\r") index++;
    } else if (char === '"') {
      if (source.startsWith('"""', index)) {
        index += 3;
        while (index < source.length && !source.startsWith('"""', index))
          index += source.startsWith('\\"""', index) ? 4 : 1;
        index += 2;
      } else {
        index++;
        while (index < source.length && source[index] !== '"' && source[index] !== "\n")
          index += source[index] === "\\" ? 2 : 1;
      }
    } else if (char === "{" || char === "[" || char === "(") {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (char === "}" || char === "]" || char === ")") {
      depth = Math.max(0, depth - 1);
    }
  }
  return deepest;
}

function limitsPlugin(config: Config): Plugin {
  const rules = [...limitRules(config.graphqlLimits), nulLiteralRule];
  return {
    onValidate({ addValidationRule }) {
      for (const rule of rules) addValidationRule(rule);
    },
    // graphql-js parses recursively: a literal nested a few thousand levels deep overflows the stack,
    // or not, depending on how warm the parser is. A document nested deeper than any real one is
    // refused before it is parsed; a stack overflow all the same is refused the same way.
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        const tooDeep = () =>
          new GraphQLError("The document is nested too deeply", { extensions: { code: "invalid_request" } });
        if (nestingOf(typeof source === "string" ? source : source.body) > MAX_DOCUMENT_NESTING) throw tooDeep();
        try {
          return parseFn(source, options);
        } catch (error) {
          if (!(error instanceof RangeError)) throw error;
          throw tooDeep();
        }
      });
    },
  };
}

/** graphql-over-HTTP parameters: variables and extensions are JSON objects, and no string holds a NUL. */
function checkParameters(request: FastifyRequest) {
  const source = (request.method === "GET" ? request.query : request.body) as Record<string, unknown> | undefined;
  if (!source || typeof source !== "object") return;
  for (const name of ["variables", "extensions"]) {
    let value = source[name];
    if (request.method === "GET" && typeof value === "string" && value !== "") {
      try {
        value = JSON.parse(value);
      } catch {
        throw new AppError("invalid_request", `The "${name}" parameter is not valid JSON`);
      }
    }
    if (value !== undefined && value !== null && value !== "" && (typeof value !== "object" || Array.isArray(value))) {
      throw new AppError("invalid_request", `The "${name}" parameter must be a JSON object`);
    }
    if (containsNul(value)) {
      throw new AppError("invalid_request", `The "${name}" parameter contains a NUL character, which no field accepts`);
    }
  }
  if (containsNul(source)) {
    throw new AppError("invalid_request", "The request contains a NUL character, which no field accepts");
  }
}

/**
 * GraphiQL's page is inline scripts and styles: its Content-Security-Policy allows exactly those
 * scripts (by hash, computed once per rendering), and no page may frame it.
 */
function graphiqlPage() {
  const pages = new Map<string, { html: string; csp: string }>();
  let latest: { html: string; csp: string } | undefined;
  const render: typeof renderGraphiQL = (options) => {
    const key = JSON.stringify(options ?? {});
    let page = pages.get(key);
    if (!page) {
      const html = renderGraphiQL(options);
      const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
        (match) =>
          `'sha256-${createHash("sha256")
            .update(match[1] ?? "")
            .digest("base64")}'`,
      );
      const csp = [
        "default-src 'none'",
        `script-src ${hashes.join(" ")}`,
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join("; ");
      page = { html, csp };
      pages.set(key, page);
    }
    latest = page;
    return page.html;
  };
  return {
    render,
    headers: (): Record<string, string> => ({
      "content-security-policy": latest?.csp ?? "default-src 'none'; frame-ancestors 'none'",
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    }),
  };
}

/** Bearer token (an installed application) or session cookie (a member), and the organization. */
async function authenticate(
  db: Db,
  request: FastifyRequest,
): Promise<Omit<GraphQLContext, "loaders" | "config" | "links" | "guard" | "processors" | "afterResponse">> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const token = readBearer(request);
    const context = token ? await authenticateAccessToken(db, token) : null;
    if (!context) {
      throw new AppError("invalid_token", "The access token is missing, invalid, expired or revoked", {
        headers: INVALID_TOKEN_HEADERS,
      });
    }
    // CORS reads the token's application from here, as for REST.
    const origin = applicationOrigin(request, context);
    request.auth = { ...context, origin };
    return {
      db,
      locale: negotiateLocale({ acceptLanguage: request.headers["accept-language"] }),
      actor: applicationActor(context),
      scope: {
        organizationId: context.organizationId,
        timeZone: context.timeZone,
        organizationSlug: context.organizationSlug,
        origin,
      },
    };
  }
  const session = await loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
  if (!session) {
    throw new AppError("invalid_token", "Sign in, or send an access token", { headers: INVALID_TOKEN_HEADERS });
  }
  // A cookie travels with cross-site requests; a JSON body or a GET (queries only) does not come from a form.
  if (
    request.method === "POST" &&
    !/^application\/(graphql-response\+)?json/i.test(request.headers["content-type"] ?? "")
  ) {
    throw new AppError("csrf_refused", "Requests with the session cookie must send Content-Type: application/json");
  }
  const wanted = request.headers["x-donata-organization"];
  const membership = await findMembershipOfUser(db, session.userId, typeof wanted === "string" ? wanted : undefined);
  if (!membership) {
    throw new AppError("not_a_member", "You are not a member of that organization");
  }
  const actor: Actor = {
    kind: "member",
    userId: session.userId,
    email: session.email,
    role: membership.role as Role,
    verifiedDate: session.verifiedDate,
  };
  return {
    db,
    actor,
    locale: negotiateLocale({
      saved: session.locale,
      acceptLanguage: request.headers["accept-language"],
      fallback: membership.locale,
    }),
    scope: {
      organizationId: membership.id,
      timeZone: membership.timeZone,
      organizationSlug: membership.slug,
      origin: requestOrigin(request, { type: "user", user_id: session.userId, label: session.email }),
    },
  };
}

export function graphqlRoutes(
  app: FastifyInstance,
  db: Db,
  config: Config,
  services: Pick<GraphQLContext, "links" | "guard" | "processors">,
) {
  const graphiql = graphiqlPage();
  const afterResponse = createAfterResponse(app);
  const yoga = createYoga<ServerContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    logging: false,
    landingPage: false,
    // Never CORS here: yoga's default echoes any origin with credentials. Token CORS is src/http/cors.ts.
    cors: false,
    renderGraphiQL: graphiql.render,
    graphiql: { title: "Donata GraphQL" },
    plugins: [limitsPlugin(config)],
    context: ({ context, reply }) => {
      if (!context) throw new AppError("invalid_token", "Not authenticated");
      return {
        ...context,
        config,
        ...services,
        loaders: createLoaders(db, context.scope.organizationId),
        afterResponse: (task: () => Promise<void>) =>
          afterResponse(reply.request, reply, () => outsideStatementBudget(task)),
      };
    },
    maskedErrors: {
      maskError(error, message) {
        const original = (error as GraphQLError).originalError;
        if (original instanceof AppError) {
          return new GraphQLError(original.message, {
            ...(error as GraphQLError),
            extensions: extensionsOf(original),
          });
        }
        if (error instanceof GraphQLError && !original) {
          // graphql-js's own request errors (a null for a non-null variable…) carry no code.
          if (error.extensions?.code) return error;
          return new GraphQLError(error.message, {
            ...error,
            extensions: { ...error.extensions, code: "invalid_request" },
          });
        }
        // Variable values the schema's types refuse (coercion) are the client's mistake, not ours.
        if (original instanceof GraphQLError && error instanceof GraphQLError) {
          // The outer message names the variable; the inner one only the type.
          return new GraphQLError(error.message, {
            nodes: error.nodes,
            source: error.source,
            positions: error.positions,
            path: error.path,
            // graphql-over-HTTP: 400 for application/graphql-response+json, 200 for application/json.
            extensions: { ...original.extensions, code: "invalid_request", http: { status: 400, spec: true } },
          });
        }
        if (isDatabaseUnavailable(original ?? error)) {
          app.log.warn({ err: original ?? error }, "database unavailable");
          return new GraphQLError("The database is not reachable right now; retry shortly", {
            extensions: { code: "database_unavailable" },
          });
        }
        app.log.error({ err: original ?? error }, "graphql resolver failed");
        return new GraphQLError(message, { extensions: { code: "internal_error" } });
      },
    },
  });

  app.route({
    url: GRAPHQL_PATH,
    method: ["GET", "POST", "OPTIONS"],
    schema: { hide: true },
    handler: async (request, reply) => {
      const wantsPage = request.method === "GET" && !(request.query as Record<string, unknown>).query;
      let context: ServerContext["context"] = null;
      if ((request.url.split("?")[1]?.length ?? 0) > MAX_QUERY_STRING) {
        return sendRefusal(reply, new AppError("request_too_large", "The query string is too long"));
      }
      if (!wantsPage && request.method !== "OPTIONS") {
        try {
          checkParameters(request);
          context = { ...(await authenticate(db, request)), config } as ServerContext["context"];
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return sendRefusal(reply, error);
        }
      }
      const response = await withStatementBudget(config.graphqlLimits.maxStatements, async () =>
        yoga.handleNodeRequestAndResponse(request, reply, { request, reply, context }),
      );
      response.headers.forEach((value, key) => {
        reply.header(key, value);
      });
      if (wantsPage && response.headers.get("content-type")?.startsWith("text/html")) reply.headers(graphiql.headers());
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
}
