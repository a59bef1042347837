import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { panelMember } from "../../admin/panel-member.js";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { MAX_IMAGE_BYTES } from "../../images/images.service.js";
import { Campaign } from "./campaigns.schemas.js";
import { removeCampaignCover, uploadCampaignCover } from "./campaigns.service.js";

const Query = Type.Object(
  { organization: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
const Params = Type.Object({ id: Type.String({ maxLength: 30 }) });

/** The signed-in member of the organization the query names who may edit its campaigns (the panel's cookie session). */
async function editor(db: Db, request: FastifyRequest): Promise<Scope> {
  return (await panelMember(db, request, "campaigns:write")).scope;
}

/**
 * A campaign's cover image, from the panel (Campaigns → edit): PUT the image itself as the body
 * (Content-Type image/png, image/jpeg or image/webp, at most 5 MB), DELETE to take it off. Both
 * answer the campaign, as `PATCH /api/v1/campaigns/{id}` does. docs/campaigns.md.
 */
export async function coverRoutes(app: FastifyInstance, db: Db, baseUrl: string) {
  // Who asks is settled before the body is read: a stranger's 5 MB never reaches memory.
  const editors = new WeakMap<FastifyRequest, Scope>();
  const scopeOf = (request: FastifyRequest) => {
    const found = editors.get(request);
    if (!found) throw new Error("cover route without its onRequest check");
    return found;
  };
  await app.register(async (uploads) => {
    uploads.addHook("onRequest", async (request) => {
      editors.set(request, await editor(db, request));
    });
    // Every body arrives as bytes: the service names the accepted types when another is sent.
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_IMAGE_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    const schema = { hide: true, querystring: Query, params: Params, response: { 200: Campaign } };
    uploads.put("/admin/campaigns/:id/cover", { schema, bodyLimit: MAX_IMAGE_BYTES }, async (request) => {
      const bytes = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const { id } = request.params as { id: string };
      return uploadCampaignCover(
        db,
        scopeOf(request),
        id,
        { bytes, contentType: request.headers["content-type"] ?? "" },
        baseUrl,
      );
    });
    uploads.delete("/admin/campaigns/:id/cover", { schema }, async (request) => {
      const { id } = request.params as { id: string };
      return removeCampaignCover(db, scopeOf(request), id);
    });
  });
}
