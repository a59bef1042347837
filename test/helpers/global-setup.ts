import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../src/db/client.js";
import { createDatabase } from "./database.js";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
  }
}

/**
 * With TEST_DATABASE_URL (a server URL), the suite runs on PostgreSQL in a database of its own,
 * created and migrated here and dropped at the end. Without it, each test file uses PGlite.
 * Either way the admin panel is built first (web/admin/dist).
 */
export default async function setup(project: TestProject) {
  // The admin panel's pages and browser tests need its built assets, as `npm start` builds them.
  // NODE_ENV=production: the same React build users get (vitest sets NODE_ENV=test for its workers).
  execFileSync("npm", ["run", "--silent", "build:admin", "--", "--logLevel", "error"], {
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production" },
  });
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    project.provide("databaseUrl", undefined);
    return;
  }
  const name = `donata_test_${randomBytes(4).toString("hex")}`;
  const created = await createDatabase(serverUrl, name);
  const database = await openDatabase({ databaseUrl: created.url, dataDir: "" });
  await database.migrate();
  await database.close();
  project.provide("databaseUrl", created.url);
  console.log(`tests run on PostgreSQL database ${name}`);

  return () => created.drop();
}
