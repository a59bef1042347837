import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase } from "../../../test/helpers/database.js";
import { unique } from "../../../test/helpers/factories.js";
import type { Database } from "../../db/client.js";
import { createOrganization } from "../organizations/organizations.service.js";
import { createUser } from "./users.service.js";

describe("users and memberships", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database?.close());

  it("adds an existing user to an organization without demoting them where they already belong", async () => {
    const db = database.db;
    const slug = `users-${unique(6)}`;
    await createOrganization(db, { slug, name: "Users" });
    const email = `owner-${unique(6)}@example.test`;
    expect(await createUser(db, { email, password: "long enough", organization: slug, role: "owner" })).toMatchObject({
      created: true,
      role: "owner",
    });
    expect(await createUser(db, { email: email.toUpperCase(), organization: slug })).toMatchObject({
      created: false,
      role: "owner",
    });
    expect(await createUser(db, { email, organization: slug, role: "admin" })).toMatchObject({ role: "admin" });
  });
});
