import path from "node:path";
import { createBackup, restoreBackup } from "../backups/backups.service.js";
import { loadConfig } from "../config.js";
import { type Command, requiredString, UsageError } from "./cli-kit.js";
import { withDatabase } from "./database.js";

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export const backupCommand: Command = {
  name: "backup",
  usage: "donata backup --out FILE [--force] [--json]",
  summary: "Write a backup of the database to FILE (consistent while the server runs; see docs/backups.md)",
  options: { out: { type: "string" }, force: { type: "boolean" } },
  async run(values, io) {
    // The path is the user's: a run inside the server gets it absolute already.
    const out = path.resolve(requiredString(values, "out"));
    const { file, manifest } = await withDatabase(io.env, (context) =>
      createBackup(context, out, { force: values.force === true }),
    );
    return {
      json: { file, ...manifest },
      text: [
        `Backup of the ${manifest.database} database written to ${file} (${megabytes(manifest.payload.bytes)})`,
        `Schema: ${manifest.schema.migrations} migrations, up to ${manifest.schema.last_tag}; encryption key ${manifest.encryption_key_id ?? "none yet"}`,
        "It does not contain the encryption key: keep DATA_DIR/encryption.key or DONATA_ENCRYPTION_KEY safe too.",
      ],
    };
  },
};

export const restoreCommand: Command = {
  name: "restore",
  usage: "donata restore FILE [--json]",
  summary: "Restore a backup into an empty DATA_DIR (PGlite) or an empty DATABASE_URL database (PostgreSQL)",
  options: { file: { type: "string" } },
  positional: "file",
  local: true,
  async run(values, io) {
    const file = values.file;
    if (typeof file !== "string" || file === "") throw new UsageError("give the backup FILE to restore");
    const result = await restoreBackup(loadConfig(io.env), path.resolve(file));
    const { manifest } = result;
    const text = [
      `Restored the backup of ${manifest.created_at} (${manifest.database}, Donata ${manifest.donata_version}) into ${result.target}`,
      `Schema: ${manifest.schema.migrations} migrations, up to ${manifest.schema.last_tag}`,
      result.cluster
        ? "On the Citus cluster: migrated, every tenant table distributed by organization and the platform tables on every node."
        : result.pendingMigrations > 0
          ? `This Donata has ${result.pendingMigrations} newer migration(s): they run on the next start (donata serve or donata migrate).`
          : "The schema is this Donata's: ready to start.",
      ...result.warnings.map((warning) => `Warning: ${warning}`),
    ];
    return {
      json: {
        restored: true,
        target: result.target,
        pending_migrations: result.pendingMigrations,
        cluster: result.cluster,
        warnings: result.warnings,
        manifest,
      },
      text,
    };
  },
};
