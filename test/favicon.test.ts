import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server.js";

/** Browsers ask every origin for /favicon.ico: it is a real icon, cached, not a 404 on every page view. */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

describe("the site's icon", () => {
  it("/favicon.ico is a 32×32 icon, cached for a day", async () => {
    const response = await fetch(`${server.url}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/x-icon");
    expect(response.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(readFileSync(new URL("../web/favicon/favicon.ico", import.meta.url)))).toBe(true);
    // ICONDIR: reserved 0, type 1 (icon), one image of 32×32 pixels at 32 bits.
    expect([body.readUInt16LE(0), body.readUInt16LE(2), body.readUInt16LE(4)]).toEqual([0, 1, 1]);
    expect([body[6], body[7], body.readUInt16LE(12)]).toEqual([32, 32, 32]);
  });

  it("/favicon.svg is the same icon as SVG, which runs nothing when opened", async () => {
    const response = await fetch(`${server.url}/favicon.svg`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    expect(response.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(await response.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 32 32">/);
  });

  it("is not in the API reference", async () => {
    const spec = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
    expect(Object.keys(spec.paths).filter((url) => url.includes("favicon"))).toEqual([]);
  });
});
