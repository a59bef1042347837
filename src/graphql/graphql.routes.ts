import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { and, eq } from "drizzle-orm";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { GraphQLError } from "graphql";
import { createYoga, type Plugin } from "graphql-yoga";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { memberships, organizations } from "../db/schema.js";
import { readBearer } from "../http/auth.js";
import { AppError } from "../http/errors.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { authenticateAccessToken } from "../oauth/tokens.service.js";
import { loadSession, SESSION_COOKIE } from "../sessions/sessions.service.js";
import { type Actor, createLoaders, type GraphQLContext } from "./context.js";
import { costLimitRule, depthLimitRule } from "./limits.js";
import { schema } from "./schema.js";

export const GRAPHQL_PATH = "/admin/graphql/";
const MAX_QUERY_STRING = 16 * 1024;

interface ServerContext {
  request: FastifyRequest;
  reply: FastifyReply;
  context: Omit<GraphQLContext, "loaders" | "links"> | null;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const limits: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(depthLimitRule);
    addValidationRule(costLimitRule);
  },
  // graphql-js parses recursively: a literal nested a few thousand levels deep overflows the stack.
  onParse({ parseFn, setParseFn }) {
    setParseFn((source, options) => {
      try {
        return parseFn(source, options);
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        throw new GraphQLError("The document is nested too deeply", {
          extensions: { code: "invalid_request" },
        });
      }
    });
  },
};

/** Bearer token (an installed application) or session cookie (a member), and the organization. */
async function authenticate(
  db: Db,
  request: FastifyRequest,
): Promise<Omit<GraphQLContext, "loaders" | "config" | "links">> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const token = readBearer(request);
    const context = token ? await authenticateAccessToken(db, token) : null;
    if (!context) {
      throw new Refusal(401, "invalid_token", "The access token is missing, invalid, expired or revoked", {
        "www-authenticate": 'Bearer realm="api", error="invalid_token"',
      });
    }
    return {
      db,
      actor: { kind: "application", applicationId: context.applicationId, permissions: context.permissions },
      scope: {
        organizationId: context.organizationId,
        timeZone: context.timeZone,
        organizationSlug: context.organizationSlug,
      },
    };
  }
  const session = await loadSession(db, request.cookies[SESSION_COOKIE]);
  if (!session) {
    throw new Refusal(401, "invalid_token", "Sign in, or send an access token", {
      "www-authenticate": 'Bearer realm="api", error="invalid_token"',
    });
  }
  // A cookie travels with cross-site requests; a JSON body or a GET (queries only) does not come from a form.
  if (
    request.method === "POST" &&
    !/^application\/(graphql-response\+)?json/i.test(request.headers["content-type"] ?? "")
  ) {
    throw new Refusal(403, "csrf_refused", "Requests with the session cookie must send Content-Type: application/json");
  }
  const wanted = request.headers["x-donata-organization"];
  const rows = await db
    .select({
      id: organizations.id,
      slug: organizations.slug,
      timeZone: organizations.timeZone,
      role: memberships.role,
    })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(
      and(
        eq(memberships.userId, session.userId),
        typeof wanted === "string" ? eq(organizations.slug, wanted) : undefined,
      ),
    )
    .orderBy(organizations.slug)
    .limit(1);
  const membership = rows[0];
  if (!membership) {
    throw new Refusal(403, "not_a_member", "You are not a member of that organization");
  }
  const actor: Actor = {
    kind: "member",
    userId: session.userId,
    email: session.email,
    role: membership.role as "owner" | "admin" | "member",
  };
  return {
    db,
    actor,
    scope: { organizationId: membership.id, timeZone: membership.timeZone, organizationSlug: membership.slug },
  };
}

export function graphqlRoutes(app: FastifyInstance, db: Db, config: Config, links: DocumentLinks) {
  const yoga = createYoga<ServerContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    logging: false,
    landingPage: false,
    renderGraphiQL,
    graphiql: { title: "Donata GraphQL" },
    plugins: [limits],
    context: ({ context }) => {
      if (!context) throw new Refusal(401, "invalid_token", "Not authenticated");
      return { ...context, config, links, loaders: createLoaders(db, context.scope.organizationId) };
    },
    maskedErrors: {
      maskError(error, message) {
        const original = (error as GraphQLError).originalError;
        if (original instanceof AppError) {
          return new GraphQLError(original.message, {
            ...(error as GraphQLError),
            extensions: { code: original.code, ...(original.errors ? { errors: original.errors } : {}) },
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
        if (original instanceof GraphQLError) {
          return new GraphQLError(original.message, {
            ...(error as GraphQLError),
            extensions: { ...original.extensions, code: "invalid_request" },
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
        return reply
          .code(413)
          .send({ errors: [{ message: "The query string is too long", extensions: { code: "request_too_large" } }] });
      }
      if (!wantsPage && request.method !== "OPTIONS") {
        try {
          context = { ...(await authenticate(db, request)), config } as ServerContext["context"];
        } catch (error) {
          if (!(error instanceof Refusal)) throw error;
          return reply
            .code(error.status)
            .headers(error.headers)
            .type("application/json; charset=utf-8")
            .send({ errors: [{ message: error.message, extensions: { code: error.code } }] });
        }
      }
      const response = await yoga.handleNodeRequestAndResponse(request, reply, { request, reply, context });
      response.headers.forEach((value, key) => {
        reply.header(key, value);
      });
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
}
