import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uninstallApplication } from "../src/modules/applications/applications.service.js";
import { fakeCheckout, fakeTenant, type Tenant } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const COLLECTIONS = ["supporters", "donations", "payments", "campaigns", "checkouts"];

describe("bearer authentication of /api/v1/", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    await fakeCheckout(server.database.db, tenant.organizationId);
  });
  afterAll(() => server?.close());

  const expect401 = async (path: string, authorization?: string) => {
    const response = await fetch(`${server.url}${path}`, authorization ? { headers: { authorization } } : {});
    expect(response.status, authorization).toBe(401);
    expect(response.headers.get("www-authenticate"), authorization).toMatch(
      /^Bearer realm="api", error="invalid_token"(, error_description="[^"]+")?$/,
    );
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const body = await response.json();
    expect(body).toMatchObject({ status: 401, code: "invalid_token", title: "Unauthorized" });
    expect(JSON.stringify(body)).not.toContain(tenant.token);
  };

  it("refuses a missing, malformed or unknown token on every collection and single read", async () => {
    for (const collection of COLLECTIONS) {
      for (const path of [`/api/v1/${collection}/`, `/api/v1/${collection}/1`]) {
        await expect401(path);
        await expect401(path, "Bearer");
        await expect401(path, "Bearer ");
        await expect401(path, `Token ${tenant.token}`);
        await expect401(path, `Bearer ${tenant.token}x`);
        await expect401(path, `Bearer ${tenant.token} extra`);
        await expect401(path, "Bearer dnt_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
      }
    }
  });

  it("accepts the scheme case-insensitively", async () => {
    const response = await fetch(`${server.url}/api/v1/checkouts/`, {
      headers: { authorization: `bearer ${tenant.token}` },
    });
    expect(response.status).toBe(200);
  });

  it("refuses an expired token", async () => {
    const expired = await fakeTenant(server.database.db, { accessTokenTtlSeconds: -1 });
    await expect401("/api/v1/checkouts/", `Bearer ${expired.token}`);
  });

  it("refuses the tokens of an application once it is uninstalled", async () => {
    const revoked = await fakeTenant(server.database.db);
    const before = await server.get("/api/v1/checkouts/", revoked.token);
    expect(before.status).toBe(200);
    const result = await uninstallApplication(server.database.db, revoked.clientId, revoked.slug);
    expect(result.revoked_tokens).toBe(1);
    await expect401("/api/v1/checkouts/", `Bearer ${revoked.token}`);
  });

  it("answers 403 insufficient_scope when the application lacks the permission", async () => {
    const limited = await fakeTenant(server.database.db, { permissions: ["campaigns:read"] });
    expect((await server.get("/api/v1/campaigns/", limited.token)).status).toBe(200);
    const response = await server.get("/api/v1/checkouts/", limited.token);
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer realm="api", error="insufficient_scope", scope="checkouts:read"',
    );
    expect(response.body).toEqual({
      type: "urn:donata:problem:insufficient_scope",
      title: "Forbidden",
      status: 403,
      detail: 'This application was not granted the "checkouts:read" permission',
      code: "insufficient_scope",
    });
  });

  it("does not leak a refresh token's use as an access token", async () => {
    await expect401("/api/v1/checkouts/", `Bearer ${tenant.refreshToken}`);
  });
});
