import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { PERMISSION_DESCRIPTIONS } from "../auth/permissions.js";
import type { Config } from "../config.js";

interface OpenApiLike {
  paths?: Record<
    string,
    Record<string, { parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[] }>
  >;
}

/** The OpenAPI document is generated from the route schemas, never written by hand. */
export async function registerOpenApi(app: FastifyInstance, config: Config) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Donata API",
        version: "1.0.0",
        description:
          "REST resource server of Donata. Every request carries `Authorization: Bearer <access token>` obtained " +
          "through the OAuth 2.0 authorization code flow with PKCE; the token acts for one organization. " +
          "Errors are RFC 9457 problem details.",
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          oauth2: {
            type: "oauth2",
            flows: {
              authorizationCode: {
                authorizationUrl: `${config.authUrl}/oauth/authorize/`,
                tokenUrl: `${config.authUrl}/oauth/token/`,
                refreshUrl: `${config.authUrl}/oauth/token/`,
                scopes: PERMISSION_DESCRIPTIONS,
              },
            },
          },
        },
      },
    },
    hideUntagged: false,
    // Shared schemas keep their $id as their name (Problem), not a generated def-N.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
    // A query parameter with a default may be left out: it is not "required" for clients.
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject?: OpenApiLike }).openapiObject;
      for (const operations of Object.values(document?.paths ?? {})) {
        for (const operation of Object.values(operations ?? {})) {
          for (const parameter of operation?.parameters ?? []) {
            if (parameter.in === "query" && parameter.schema?.default !== undefined) parameter.required = false;
          }
        }
      }
      return document as never;
    },
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    uiConfig: { docExpansion: "list", deepLinking: true },
    staticCSP: true,
  });
  app.get("/api/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
