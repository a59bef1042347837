import { isProduction } from "../config.js";
import type { Database } from "../db/client.js";
import { countOrganizations } from "../modules/organizations/organizations.service.js";
import { NO_ORGANIZATION_HINT } from "../setup/setup.service.js";
import { UsageError } from "./cli-kit.js";

/** `serve --demo` (what `npm start` runs) in production: refused before the database is even opened. */
export function refuseDemoInProduction(env: NodeJS.ProcessEnv, demo: unknown) {
  if (demo && isProduction(env)) {
    throw new UsageError(
      "--demo is refused in production (NODE_ENV=production): run `donata serve`, and `donata setup` once to create the first organization",
    );
  }
}

/** What `serve` without demo data says on a database that has no organization yet. */
export async function setupHint(database: Database): Promise<string[]> {
  return (await countOrganizations(database.db)) > 0 ? [] : [NO_ORGANIZATION_HINT];
}
