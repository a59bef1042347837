import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { sessionUser } from "../../admin/admin-session.routes.js";
import { type Actor, type Role, requirePermission } from "../../auth/actor.js";
import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { requestOrigin } from "../../events/origin.js";
import { MAX_IMAGE_BYTES } from "../../images/images.service.js";
import { findMembershipOfUser } from "../members/members.service.js";
import { removeLogo, uploadLogo } from "./legal-profile.service.js";

const Query = Type.Object(
  { organization: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

/** The signed-in owner or admin of the organization the query names (the panel's cookie session). */
async function manager(db: Db, request: FastifyRequest) {
  const session = await sessionUser(db, request);
  if (!session) throw new AppError("not_signed_in", "Sign in to the admin panel first");
  const { organization } = request.query as { organization?: unknown };
  if (typeof organization !== "string" || organization === "" || organization.length > 100) {
    throw new AppError("invalid_request", "Name the organization: ?organization=<its slug>", {
      errors: [{ parameter: "organization", message: "must be the organization's slug" }],
    });
  }
  const membership = await findMembershipOfUser(db, session.userId, organization);
  if (!membership) throw new AppError("not_a_member", "You are not a member of that organization");
  const actor: Actor = { kind: "member", userId: session.userId, email: session.email, role: membership.role as Role };
  requirePermission(actor, "organization:manage");
  return {
    organizationId: membership.id,
    origin: requestOrigin(request, { type: "user", user_id: session.userId, label: session.email }),
  };
}

/**
 * The organization's logo, from the panel (Settings → Legal profile): PUT the image itself as the
 * body (Content-Type image/png, image/jpeg or image/webp, at most 5 MB), DELETE to take it off.
 * Both answer the legal profile, as `updateLegalProfile` does.
 */
export async function logoRoutes(app: FastifyInstance, db: Db, baseUrl: string) {
  // Who asks is settled before the body is read: a stranger's 5 MB never reaches memory.
  const managers = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof manager>>>();
  const managerOf = (request: FastifyRequest) => {
    const found = managers.get(request);
    if (!found) throw new Error("logo route without its onRequest check");
    return found;
  };
  await app.register(async (uploads) => {
    uploads.addHook("onRequest", async (request) => {
      managers.set(request, await manager(db, request));
    });
    // Every body arrives as bytes: the service names the accepted types when another is sent.
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_IMAGE_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    uploads.put(
      "/admin/organization/logo",
      { schema: { hide: true, querystring: Query }, bodyLimit: MAX_IMAGE_BYTES },
      async (request) => {
        const { organizationId, origin } = managerOf(request);
        const bytes = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return uploadLogo(
          db,
          organizationId,
          { bytes, contentType: request.headers["content-type"] ?? "" },
          baseUrl,
          origin,
        );
      },
    );
    uploads.delete("/admin/organization/logo", { schema: { hide: true, querystring: Query } }, async (request) => {
      const { organizationId, origin } = managerOf(request);
      return removeLogo(db, organizationId, origin);
    });
  });
}
