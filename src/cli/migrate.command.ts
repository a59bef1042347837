import type { Command } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const migrateCommand: Command = {
  name: "migrate",
  usage: "donata migrate [--json]",
  summary: "Apply pending database migrations",
  options: {},
  async run(_values, io) {
    const kind = await withDatabase(io.env, async ({ database }) => database.kind, { create: true });
    return { json: { migrated: true, database: kind }, text: [`Database (${kind}) is up to date`] };
  },
};
