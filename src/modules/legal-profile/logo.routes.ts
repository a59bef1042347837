import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { panelMember } from "../../admin/panel-member.js";
import type { Db } from "../../db/client.js";
import { MAX_IMAGE_BYTES } from "../../images/images.service.js";
import { removeLogo, uploadLogo } from "./legal-profile.service.js";

const Query = Type.Object(
  { organization: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

/** The signed-in owner or admin of the organization the query names (the panel's cookie session). */
async function manager(db: Db, request: FastifyRequest) {
  const { scope } = await panelMember(db, request, "organization:manage");
  return { organizationId: scope.organizationId, origin: scope.origin };
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
