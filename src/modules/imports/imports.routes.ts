import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { panelMember } from "../../admin/panel-member.js";
import type { Actor } from "../../auth/actor.js";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import {
  fileTooLarge,
  type ImportQuery,
  type ImportSettings,
  importResults,
  importSettingsOf,
  MAX_IMPORT_BYTES,
  previewImport,
  queueImport,
  requireImporter,
} from "./imports.service.js";

const Organization = Type.String({ minLength: 1, maxLength: 100 });
const UploadQuery = Type.Object(
  {
    organization: Organization,
    kind: Type.String({ maxLength: 40 }),
    preset: Type.Optional(Type.String({ maxLength: 40 })),
    mapping: Type.Optional(Type.String({ maxLength: 100_000 })),
    dry_run: Type.Optional(Type.String({ maxLength: 5 })),
    file_name: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

interface Upload {
  scope: Scope;
  actor: Actor;
  settings: ImportSettings;
}

/**
 * The panel's imports (docs/import.md), for the organization's owners and admins with the panel's
 * cookie session: POST the CSV file itself as the body (at most 50 MB) to
 * `/admin/imports/preview` (its columns, the field each fills, its first rows; nothing stored) or to
 * `/admin/imports` (checked and queued for the worker: 202 with the import, followed through GraphQL
 * `import(id)`); `GET /admin/imports/{id}/results.csv` once it ran. The query names the organization,
 * the kind, the preset, the mapping (a JSON object of column → field), dry_run and the file's name.
 */
export async function importRoutes(app: FastifyInstance, db: Db) {
  // Who asks and what they ask for are settled before the body is read: a refused 50 MB never reaches memory.
  const uploads = new WeakMap<FastifyRequest, Upload>();
  const uploadOf = (request: FastifyRequest) => {
    const found = uploads.get(request);
    if (!found) throw new Error("import route without its onRequest check");
    return found;
  };
  const bodyOf = (request: FastifyRequest) => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
  await app.register(async (files) => {
    files.addHook("onRequest", async (request) => {
      const { actor, scope } = await panelMember(db, request);
      const settings = importSettingsOf(request.query as ImportQuery);
      requireImporter(actor, settings);
      if (/^multipart\//i.test(request.headers["content-type"] ?? "")) {
        throw new AppError("unsupported_media_type", "Send the CSV file itself as the body (Content-Type text/csv)");
      }
      const length = Number(request.headers["content-length"]);
      if (length > MAX_IMPORT_BYTES) throw fileTooLarge();
      uploads.set(request, { actor, scope, settings });
    });
    files.removeAllContentTypeParsers();
    files.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_IMPORT_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    const schema = { hide: true, querystring: UploadQuery };
    files.post("/admin/imports/preview", { schema, bodyLimit: MAX_IMPORT_BYTES }, async (request) =>
      previewImport(uploadOf(request).settings, bodyOf(request)),
    );
    files.post("/admin/imports", { schema, bodyLimit: MAX_IMPORT_BYTES }, async (request, reply) => {
      const { actor, scope, settings } = uploadOf(request);
      return reply.code(202).send(await queueImport(db, scope, actor, settings, bodyOf(request)));
    });
  });

  app.get(
    "/admin/imports/:id/results.csv",
    {
      schema: {
        hide: true,
        querystring: Type.Object({ organization: Organization }, { additionalProperties: false }),
        params: Type.Object({ id: Type.String({ maxLength: 30 }) }),
      },
    },
    async (request, reply) => {
      const { actor, scope } = await panelMember(db, request);
      const { fileName, csv } = await importResults(db, scope, actor, (request.params as { id: string }).id);
      return reply
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="${fileName}"`)
        .header("cache-control", "private, no-store")
        .send(csv);
    },
  );
}
