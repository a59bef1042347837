import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { count, eq } from "drizzle-orm";
import * as mupdf from "mupdf";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { images, organizations } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { updateLegalProfile } from "../src/modules/legal-profile/legal-profile.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { runCliInProcess } from "./helpers/cli.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/** A solid red picture with a transparent margin, of the given size and format. */
async function picture(width: number, height: number, format: "png" | "jpeg" | "webp" = "png") {
  const base = sharp({ create: { width, height, channels: 4, background: { r: 230, g: 0, b: 0, alpha: 1 } } });
  return format === "png" ? base.png().toBuffer() : format === "jpeg" ? base.jpeg().toBuffer() : base.webp().toBuffer();
}

/** A PNG whose header claims a size far past what decoding allows (its pixels are never there). */
function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.alloc(1024))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * The organization's logo (Settings → Legal profile): uploaded, checked, resized, served with long
 * caching, shown on the donation page and printed on receipts; every refusal a 4xx that stores nothing.
 */
describe("organization logo", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let ownerCookie: string;
  let memberCookie: string;
  let campaignSlug: string;

  const cookieOf = async (organization: string, role: "owner" | "member") => {
    const user = await createUser(server.database.db, {
      email: `${role}-${unique(6)}@example.test`,
      password: "long enough password",
      organization,
      role,
    });
    return `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
  };

  const upload = (
    body: Buffer,
    contentType: string,
    options: { cookie?: string; slug?: string; origin?: string } = {},
  ) =>
    fetch(`${server.url}/admin/organization/logo?organization=${options.slug ?? tenant.slug}`, {
      method: "PUT",
      headers: {
        "content-type": contentType,
        origin: options.origin ?? server.url,
        ...(options.cookie === "" ? {} : { cookie: options.cookie ?? ownerCookie }),
      },
      body: new Uint8Array(body),
    });

  const logoUrlOf = async (organizationId: number) =>
    (
      await server.database.db
        .select({ logoUrl: organizations.logoUrl })
        .from(organizations)
        .where(eq(organizations.id, organizationId))
    )[0]?.logoUrl;
  const imageCount = async (organizationId: number) =>
    (await server.database.db.select({ n: count() }).from(images).where(eq(images.organizationId, organizationId)))[0]
      ?.n;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
    ownerCookie = await cookieOf(tenant.slug, "owner");
    memberCookie = await cookieOf(tenant.slug, "member");
    campaignSlug = `logo-${unique(6)}`;
    await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: campaignSlug,
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 1,
      maxAmount: 1000,
      archiveDate: null,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("an owner uploads a PNG: it is resized to 128, 256 and 512 pixels wide, served for a year, and audited", async () => {
    const response = await upload(await picture(1200, 400), "image/png");
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.logo_url).toMatch(
      new RegExp(`^${server.url}/images/${tenant.organizationId}/img_[A-Za-z0-9_-]{22}/512\\.png$`),
    );
    expect(await logoUrlOf(tenant.organizationId)).toBe(body.logo_url);

    for (const [width, height] of [
      [128, 43],
      [256, 85],
      [512, 171],
    ] as const) {
      const image = await fetch(String(body.logo_url).replace(/512\.png$/, `${width}.png`));
      expect(image.status).toBe(200);
      expect(image.headers.get("content-type")).toBe("image/png");
      expect(image.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(image.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
      const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(["png", width, height]);
      // Revalidation answers 304 without the bytes.
      const again = await fetch(image.url, { headers: { "if-none-match": image.headers.get("etag") ?? "" } });
      expect(again.status).toBe(304);
    }
    // A width that was not made, another organization's id, another format: 404.
    expect((await fetch(String(body.logo_url).replace(/512\.png$/, "300.png"))).status).toBe(404);
    expect(
      (
        await fetch(
          String(body.logo_url).replace(`/images/${tenant.organizationId}/`, `/images/${other.organizationId}/`),
        )
      ).status,
    ).toBe(404);
    expect((await fetch(String(body.logo_url).replace(/\.png$/, ".jpg"))).status).toBe(404);

    const [updated] = (await auditRowsOf(server.database.db, tenant.organizationId, ["legal_profile.updated"])).slice(
      -1,
    );
    expect(updated?.actor).toMatchObject({ type: "user" });
    expect(updated?.changes).toMatchObject({ logo_url: { before: null, after: body.logo_url } });

    // GraphQL reads it with the rest of the profile.
    const graphql = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: ownerCookie, "x-donata-organization": tenant.slug },
      body: JSON.stringify({ query: "{ legalProfile { logo_url } }" }),
    }).then((r) => r.json());
    expect(graphql.data.legalProfile.logo_url).toBe(body.logo_url);
  });

  it("turns a JPEG upright by its EXIF orientation and keeps none of its metadata", async () => {
    // Stored 400×800 with orientation 6 (turned a quarter): upright it is 800×400.
    const photo = await sharp({ create: { width: 400, height: 800, channels: 3, background: "#3366cc" } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect((await sharp(photo).metadata()).orientation).toBe(6);
    const response = await upload(photo, "image/jpeg; charset=binary");
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    const stored = Buffer.from(await (await fetch(body.logo_url)).arrayBuffer());
    const meta = await sharp(stored).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["png", 512, 256]);
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    // A WebP is taken too.
    expect((await upload(await picture(300, 300, "webp"), "image/webp")).status).toBe(200);
  });

  it("refuses what is not a usable image with a clear 4xx, and stores nothing", async () => {
    const before = await logoUrlOf(tenant.organizationId);
    const stored = await imageCount(tenant.organizationId);
    const refusals: [Promise<Response>, number, string, RegExp][] = [
      [
        upload(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"), "image/svg+xml"),
        415,
        "unsupported_media_type",
        /PNG, JPEG or WebP/,
      ],
      [upload(await picture(300, 300), "text/plain"), 415, "unsupported_media_type", /text\/plain/],
      [upload(await picture(300, 300, "jpeg"), "image/png"), 422, "invalid_image", /a JPEG image, not image\/png/],
      [upload(Buffer.from("definitely not a picture"), "image/png"), 422, "invalid_image", /cannot be read/],
      // An SVG (a document that can run script) sent as a PNG: its bytes never reach a decoder.
      [
        upload(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg' width='300' height='300'/>"), "image/png"),
        422,
        "invalid_image",
        /cannot be read as an image \(image\/png was declared\)/,
      ],
      [upload(Buffer.alloc(0), "image/png"), 422, "invalid_image", /empty/],
      [upload(await picture(40, 20), "image/png"), 422, "invalid_image", /40×20 pixels; a logo must be at least 64×32/],
      [upload(pngClaiming(20_000, 20_000), "image/png"), 422, "invalid_image", /./],
      [upload(Buffer.alloc(5 * 1024 * 1024 + 1, 1), "image/png"), 413, "", /./],
      [
        upload(await picture(300, 300), "image/png", { cookie: memberCookie }),
        403,
        "insufficient_scope",
        /organization:manage/,
      ],
      [upload(await picture(300, 300), "image/png", { cookie: "" }), 401, "not_signed_in", /Sign in/],
      [upload(await picture(300, 300), "image/png", { slug: other.slug }), 403, "not_a_member", /not a member/],
      [
        upload(await picture(300, 300), "image/png", { origin: "https://evil.example" }),
        403,
        "cross_origin_refused",
        /another origin/,
      ],
    ];
    for (const [pending, status, code, detail] of refusals) {
      const response = await pending;
      const body = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      if (code) expect(body.code).toBe(code);
      expect(body.detail).toMatch(detail);
    }
    expect(await logoUrlOf(tenant.organizationId)).toBe(before);
    expect(await imageCount(tenant.organizationId)).toBe(stored);
    expect(await imageCount(other.organizationId)).toBe(0);
  });

  it("shows the logo on the donation page and prints it on receipts, which keep it after the logo changes or goes", async () => {
    const red = await upload(await picture(600, 200), "image/png").then((r) => r.json());
    await updateLegalProfile(
      server.database.db,
      tenant.organizationId,
      { legal_name: "Logo Onlus", address_line1: "Via Roma 1", postal_code: "00184", city: "Roma", country: "IT" },
      undefined,
    );
    const page = await fetch(`${server.url}/donate/${tenant.slug}/${campaignSlug}`).then((r) => r.text());
    // By its path: the page loads images from its own origin only (and a moved BASE_URL still finds it).
    const redPath = new URL(red.logo_url).pathname;
    expect(page).toContain(`<img class="org-logo" id="org-logo" src="${redPath}" alt="" height="48">`);
    const campaign = await fetch(
      `${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${campaignSlug}`,
    ).then((r) => r.json());
    expect(campaign.organization.logo_url).toBe(red.logo_url);

    // A gift, and its receipt.
    const base = `${server.url}/api/v1/public/organizations/${tenant.slug}`;
    const started = await fetch(`${base}/campaigns/${campaignSlug}/checkouts/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount: 20, frequency: 0 }),
    }).then((r) => r.json());
    const completed = await fetch(`${base}/checkouts/${started.id}/complete`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_secret: started.client_secret,
        amount: 20,
        frequency: 0,
        processor: "sandbox",
        card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
        supporter: { email: `donor-${unique(6)}@example.test`, first_name: "Ada", last_name: "Rossi" },
        consents: { privacy: true },
      }),
    });
    expect(completed.status).toBe(200);
    const receipts = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
      body: JSON.stringify({ query: "{ receipts(first: 5) { url } }" }),
    }).then((r) => r.json());
    const url = receipts.data.receipts[0].url as string;

    // The logo changes, then goes: the receipt keeps the one it was issued with.
    await upload(await picture(300, 300, "jpeg"), "image/jpeg");
    const removed = await fetch(`${server.url}/admin/organization/logo?organization=${tenant.slug}`, {
      method: "DELETE",
      headers: { cookie: ownerCookie, origin: server.url },
    });
    expect(removed.status).toBe(200);
    expect((await removed.json()).logo_url).toBeNull();
    expect(await fetch(`${server.url}/donate/${tenant.slug}/${campaignSlug}`).then((r) => r.text())).not.toContain(
      'id="org-logo"',
    );
    const [gone] = (await auditRowsOf(server.database.db, tenant.organizationId, ["legal_profile.updated"])).slice(-1);
    expect(gone?.changes).toMatchObject({ logo_url: { before: expect.stringMatching(/\/images\//), after: null } });

    const html = await fetch(url);
    expect(html.headers.get("content-security-policy")).toContain("img-src 'self'");
    expect(await html.text()).toContain(`<img class="logo" id="issuer-logo" src="${redPath}" alt="Logo Onlus">`);
    const pdf = Buffer.from(await (await fetch(`${url}/pdf`)).arrayBuffer());
    const document = mupdf.Document.openDocument(pdf, "application/pdf");
    const pixmap = document.loadPage(0).toPixmap(mupdf.Matrix.identity, mupdf.ColorSpace.DeviceRGB, false, true);
    const pixels = pixmap.getPixels();
    let red_ = 0;
    for (let index = 0; index < pixels.length; index += 3) {
      if ((pixels[index] ?? 0) > 200 && (pixels[index + 1] ?? 255) < 40 && (pixels[index + 2] ?? 255) < 40) red_++;
    }
    // The 600×200 logo fits 160×53 points at the top: thousands of red pixels.
    expect(red_).toBeGreaterThan(4000);
    // The image is still served: receipts link it.
    expect((await fetch(red.logo_url)).status).toBe(200);
  });

  it("donata org profile --logo uploads a file and --logo '' takes it off", async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), "donata-logo-"));
    const env = { LOG_LEVEL: "warn", DATA_DIR: path.join(directory, "data"), BASE_URL: "https://give.example.org" };
    try {
      const slug = `cli-${unique(8)}`;
      expect((await runCliInProcess(["migrate"], env)).code).toBe(0);
      expect((await runCliInProcess(["org", "create", "--slug", slug, "--name", "CLI ETS"], env)).code).toBe(0);
      const file = path.join(directory, "logo.png");
      await writeFile(file, await picture(200, 100));
      const set = await runCliInProcess(["org", "profile", "--org", slug, "--logo", file, "--json"], env);
      expect(set.code, set.stderr).toBe(0);
      // 200 pixels wide: kept at 128 and at its own 200, the largest named.
      expect(JSON.parse(set.stdout).logo_url).toMatch(
        /^https:\/\/give\.example\.org\/images\/\d+\/img_[\w-]{22}\/200\.png$/,
      );
      const wrongKind = await runCliInProcess(["org", "profile", "--org", slug, "--logo", `${file}.gif`], env);
      expect(wrongKind.code).not.toBe(0);
      expect(wrongKind.stderr).toMatch(/\.png, \.jpg, \.jpeg or \.webp/);
      const tooSmall = path.join(directory, "tiny.png");
      await writeFile(tooSmall, await picture(20, 20));
      const refused = await runCliInProcess(["org", "profile", "--org", slug, "--logo", tooSmall], env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/at least 64×32/);
      const cleared = await runCliInProcess(["org", "profile", "--org", slug, "--logo", "", "--json"], env);
      expect(cleared.code, cleared.stderr).toBe(0);
      expect(JSON.parse(cleared.stdout).logo_url).toBeNull();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
