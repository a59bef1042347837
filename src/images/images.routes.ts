import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { findRendition } from "./images.repo.js";

const Params = Type.Object({
  organization: Type.String({ pattern: "^[0-9]{1,18}$" }),
  image: Type.String({ pattern: "^img_[A-Za-z0-9_-]{10,40}$" }),
  file: Type.String({ pattern: "^[0-9]{1,5}\\.(png|jpg)$" }),
});

/**
 * Uploaded images, as pages, emails and receipts link them: public (a logo is on every donation page),
 * named by an unguessable id, and never changed once stored, so cached for a year by anyone.
 */
export function imageRoutes(app: FastifyInstance, db: Db) {
  app.get("/images/:organization/:image/:file", { schema: { hide: true, params: Params } }, async (request, reply) => {
    const { organization, image, file } = request.params as { organization: string; image: string; file: string };
    const [width, extension] = file.split(".") as [string, string];
    const row = await findRendition(db, Number(organization), image, Number(width));
    const type = extension === "png" ? "image/png" : "image/jpeg";
    if (!row || row.contentType !== type) throw new AppError("not_found", "No such image");
    const etag = `"${image}-${row.width}"`;
    if (request.headers["if-none-match"] === etag) return reply.code(304).send();
    return reply
      .headers({
        "content-type": row.contentType,
        "cache-control": "public, max-age=31536000, immutable",
        etag,
        "x-content-type-options": "nosniff",
        // Webmail and the charity's own site show it: another origin may embed it.
        "cross-origin-resource-policy": "cross-origin",
        "content-security-policy": "default-src 'none'",
      })
      .send(row.data);
  });
}
