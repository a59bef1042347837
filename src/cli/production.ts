import { type Config, isProduction } from "../config.js";
import type { Database } from "../db/client.js";
import { findUserByEmail, verifyPassword } from "../identity/users.service.js";
import { countOrganizations } from "../modules/organizations/organizations.service.js";
import { NO_ORGANIZATION_HINT } from "../modules/organizations/setup.service.js";
import { DEMO_LOGIN } from "../seed/demo.js";
import { UsageError } from "./cli-kit.js";

/** `serve --demo` (what `npm start` runs) in production: refused before the database is even opened. */
export function refuseDemoInProduction(env: NodeJS.ProcessEnv, demo: unknown) {
  if (demo && isProduction(env)) {
    throw new UsageError(
      "--demo is refused in production (NODE_ENV=production): run `donata serve`, and `donata setup` once to create the first organization",
    );
  }
}

/**
 * What `serve` without demo data says at start: how to begin on a database with no organization, and,
 * in production, that the demo login (whose password is published in the README) still works.
 */
export async function setupHint(config: Config, database: Database): Promise<string[]> {
  if ((await countOrganizations(database.db)) === 0) return [NO_ORGANIZATION_HINT];
  if (!config.production) return [];
  const demo = await findUserByEmail(database.db, DEMO_LOGIN.email);
  if (!demo?.passwordHash || !(await verifyPassword(demo.passwordHash, DEMO_LOGIN.password))) return [];
  return [
    `WARNING: ${DEMO_LOGIN.email} still signs in with the demo password published in the README: run \`donata user link --email ${DEMO_LOGIN.email}\` and choose another`,
  ];
}
