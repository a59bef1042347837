import { createHash, randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { normalizeEmail } from "../src/identity/users.service.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser, hiddenFields } from "./helpers/browser.js";
import { unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "correct horse battery";
const CALLBACK = "https://client.example.test/oauth/callback";
const WRONG = "not the password!";

const tooManyAttempts = {
  type: "urn:donata:problem:too_many_attempts",
  title: "Too Many Requests",
  status: 429,
  detail: "Too many failed sign-in attempts. Try again later.",
  code: "too_many_attempts",
};
const invalidCredentials = {
  type: "urn:donata:problem:invalid_credentials",
  title: "Unauthorized",
  status: 401,
  detail: "The email or password is incorrect.",
  code: "invalid_credentials",
};

describe("sign-in throttling", () => {
  let server: TestServer;
  let slug: string;
  let clientId: string;
  // Each test signs in from its own client address (the server trusts 127.0.0.1 as a proxy).
  let addresses = 0;
  const newAddress = () => `198.51.${Math.floor(++addresses / 250)}.${1 + (addresses % 250)}`;

  const adminSignIn = async (email: string, password: string, address: string) => {
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify({ email, password }),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };

  const newAccount = async (email = `person-${unique(8)}@example.test`) => {
    await createUser(server.database.db, { email, password: PASSWORD, organization: slug });
    return email;
  };

  beforeAll(async () => {
    server = await startTestServer({ trustProxy: "127.0.0.1" });
    slug = `org-${unique(6)}`;
    await createOrganization(server.database.db, { slug, name: "Org" });
    const application = await createApplication(server.database.db, {
      name: "Client",
      applicationUrl: "https://client.example.test/",
      callbackUrls: [CALLBACK],
    });
    clientId = application.client_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("counts 41 parallel wrong passwords to /admin/api/session before checking them: 5 get 401, the rest 429, then the right one too", async () => {
    const email = await newAccount();
    const address = newAddress();
    const attempts = await Promise.all(Array.from({ length: 41 }, () => adminSignIn(email, WRONG, address)));
    const refused = attempts.filter((attempt) => attempt.status === 429);
    expect(attempts.filter((attempt) => attempt.status === 401).map((attempt) => attempt.body)).toEqual(
      Array(5).fill(invalidCredentials),
    );
    expect(refused).toHaveLength(36);
    for (const attempt of refused) {
      expect(attempt.body).toEqual(tooManyAttempts);
      expect(attempt.headers.get("content-type")).toBe("application/problem+json");
      expect(Number(attempt.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(attempt.headers.get("retry-after"))).toBeLessThanOrEqual(900);
    }
    const right = await adminSignIn(email, PASSWORD, address);
    expect(right.status).toBe(429);
    expect(right.body).toEqual(tooManyAttempts);
    expect(right.headers.get("set-cookie")).toBeNull();
    // The account is what is throttled: another address does not get it back either.
    expect((await adminSignIn(email, PASSWORD, newAddress())).status).toBe(429);
  });

  it("counts every attempt in the shared store, while the request limit around it is leased", async () => {
    const email = await newAccount();
    const address = newAddress();
    const writes = () => server.queries.filter((query) => /^insert into "rate_limits"/i.test(query)).length;
    const before = writes();
    for (let i = 0; i < 4; i++) expect((await adminSignIn(email, WRONG, address)).status).toBe(401);
    // Per attempt one write for the account and one for the address; the address's request limit
    // (600/1m, leases of 60) wrote once for all four.
    expect(writes() - before).toBe(4 * 2 + 1);
  });

  it("counts 41 parallel wrong passwords to the OAuth login form the same way", async () => {
    const email = await newAccount();
    const address = newAddress();
    const browser = new Browser(server.url);
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: CALLBACK,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: createHash("sha256").update(randomBytes(32)).digest("base64url"),
      state: "s",
    });
    const loginPage = async () => {
      const page = await browser.request(`/oauth/authorize/?${query}`, { headers: { "x-forwarded-for": address } });
      expect(page.status).toBe(200);
      return {
        fields: hiddenFields(page.html),
        cookie: `donata_login_csrf=${browser.cookies.get("donata_login_csrf")}`,
      };
    };
    const login = await loginPage();
    // Every attempt posts the same form with its own cookie header, as parallel tabs would.
    const form = async (password: string, page = login) => {
      const response = await fetch(`${server.url}/oauth/login/`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-forwarded-for": address,
          cookie: page.cookie,
        },
        body: new URLSearchParams({ ...page.fields, email, password }).toString(),
      });
      return { status: response.status, headers: response.headers, html: await response.text() };
    };
    const attempts = await Promise.all(Array.from({ length: 41 }, () => form(WRONG)));
    const message = (html: string) => /<div class="error" role="alert">([^<]*)<\/div>/.exec(html)?.[1];
    const unauthorized = attempts.filter((attempt) => attempt.status === 401);
    const refused = attempts.filter((attempt) => attempt.status === 429);
    expect(unauthorized).toHaveLength(5);
    expect(refused).toHaveLength(36);
    expect(message(unauthorized[0]?.html ?? "")).toBe("The email or password is incorrect.");
    for (const attempt of refused) {
      expect(message(attempt.html)).toBe("Too many failed sign-in attempts. Try again later.");
      expect(Number(attempt.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const right = await form(PASSWORD, await loginPage());
    expect(right.status).toBe(429);
    expect(right.headers.getSetCookie().some((line) => line.startsWith("donata_session="))).toBe(false);
  });

  it("a success clears the account's failures; failures across accounts lock the client address", async () => {
    const email = await newAccount();
    const address = newAddress();
    for (let i = 0; i < 4; i++) expect((await adminSignIn(email, WRONG, address)).status).toBe(401);
    expect((await adminSignIn(email, PASSWORD, address)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await adminSignIn(email, WRONG, address)).status).toBe(401);
    expect((await adminSignIn(email, PASSWORD, address)).status).toBe(200);

    const spray = newAddress();
    const statuses = await Promise.all(
      Array.from({ length: 31 }, (_, i) => adminSignIn(`nobody-${i}-${unique(6)}@example.test`, WRONG, spray)),
    );
    expect(statuses.filter((attempt) => attempt.status === 401)).toHaveLength(30);
    const refused = statuses.find((attempt) => attempt.status === 429);
    expect(refused?.body).toEqual(tooManyAttempts);
    expect(refused?.headers.get("ratelimit-policy")).toBe('"sign_in_address";q=30;w=900');
    expect((await adminSignIn(await newAccount(), PASSWORD, spray)).status).toBe(429);
  });

  it("throttles and looks up one account for every spelling of its email; vİctim (U+0130) is not victim", async () => {
    const id = unique(8);
    const victim = await newAccount(`victim-${id}@example.test`);
    const dotted = `vİctim-${id}@example.test`;
    const address = newAddress();
    // The dotted capital I lower-cases to "i̇" (i + U+0307) in every process: another, unknown account.
    const impostor = await adminSignIn(dotted, PASSWORD, address);
    expect(impostor.status).toBe(401);
    expect(impostor.body).toEqual(invalidCredentials);
    // Upper case and decomposed forms are the victim's account: they count against it and lock it.
    for (const spelling of [victim.toUpperCase(), ` ${victim} `, `Victim-${id}@Example.Test`]) {
      expect((await adminSignIn(spelling, WRONG, address)).status).toBe(401);
    }
    expect((await adminSignIn(victim.toUpperCase(), WRONG, newAddress())).status).toBe(401);
    expect((await adminSignIn(`VICTIM-${id.toUpperCase()}@EXAMPLE.TEST`, WRONG, newAddress())).status).toBe(401);
    expect((await adminSignIn(victim, PASSWORD, newAddress())).body).toEqual(tooManyAttempts);
    // The impostor spelling still has a counter of its own and never reaches the victim.
    expect((await adminSignIn(dotted, PASSWORD, newAddress())).body).toEqual(invalidCredentials);
  });

  it("signs in exactly when normalizeEmail maps a spelling to the stored address (case and Unicode pairs)", async () => {
    // Pairs that lower-case or compose alike in JavaScript, and look-alikes that must not.
    const variants: Record<string, string[]> = {
      e: ["e", "E"],
      é: ["é", "É", "e\u0301", "E\u0301"],
      k: ["k", "K", "\u212A"],
      i: ["i", "I", "\u0130", "\u0131"],
      s: ["s", "S", "\u017F"],
    };
    const id = unique(8);
    const stored = `zoé-kis-${id}@example.test`;
    await newAccount(stored);
    const letters = [..."zoé-kis"];
    const failures = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(...letters.map((letter) => fc.constantFrom(...(variants[letter] ?? [letter])))),
        async (spelled) => {
          const spelling = `${spelled.join("")}-${id}@example.test`;
          const response = await adminSignIn(spelling, PASSWORD, newAddress());
          const key = normalizeEmail(spelling);
          const same = key === normalizeEmail(stored);
          // A spelling of another account fails, and counts against that account only.
          if (!same) failures.set(key, (failures.get(key) ?? 0) + 1);
          expect(response.status).toBe(same ? 200 : (failures.get(key) ?? 0) > 5 ? 429 : 401);
          if (same) expect(response.body.user.email).toBe(normalizeEmail(stored));
        },
      ),
      { seed: 11, numRuns: 25 },
    );
  });

  it("stores new accounts in normalised form, so another spelling finds the same person", async () => {
    const id = unique(8);
    const created = await createUser(server.database.db, {
      email: `  Zoe\u0301-${id}@Example.TEST `,
      password: PASSWORD,
    });
    expect(created.email).toBe(`zoé-${id}@example.test`);
    const again = await createUser(server.database.db, { email: `ZOÉ-${id}@example.test`, organization: slug });
    expect(again).toMatchObject({ id: created.id, created: false });
  });

  it("reads its limits from the environment", () => {
    const config = loadConfig({ RATE_LIMIT_SIGN_IN_ACCOUNT: "3/1h", RATE_LIMIT_SIGN_IN_ADDRESS: "100/30m" });
    expect(config.rateLimits.signInAccount).toEqual({ name: "sign_in_account", points: 3, durationSeconds: 3600 });
    expect(config.rateLimits.signInAddress).toEqual({ name: "sign_in_address", points: 100, durationSeconds: 1800 });
    expect(() => loadConfig({ RATE_LIMIT_SIGN_IN_ACCOUNT: "5 per minute" })).toThrow(
      'RATE_LIMIT_SIGN_IN_ACCOUNT must be "<requests>/<window>" such as "600/1m" (window in s, m or h, at most 24h), got "5 per minute"',
    );
  });
});
