import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applications } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeCampaign, fakeCompletedCheckout, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

type Auth = { token?: string; cookie?: string };

describe("GraphQL mutations", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let admin: Auth;
  let member: Auth;
  let otherAdmin: Auth;

  const graphql = async (
    query: string,
    variables: Record<string, unknown>,
    auth: Auth,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  };

  const signIn = async (organization: string, role: "owner" | "admin" | "member") => {
    const user = await createUser(server.database.db, {
      email: `${role}-${unique(6)}@example.test`,
      password: "long enough password",
      organization,
      role,
    });
    return { cookie: `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}` };
  };

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    admin = await signIn(tenant.slug, "admin");
    member = await signIn(tenant.slug, "member");
    otherAdmin = await signIn(other.slug, "owner");
  });
  afterAll(() => server?.close());

  const CREATE = `mutation ($input: CampaignInput!) { createCampaign(input: $input) {
    id title slug goal is_goal_enabled asks min_amount max_amount shown_fields required_fields tags archive_date } }`;

  describe("campaigns", () => {
    it("creates a campaign that REST then serves, for admins and applications with campaigns:write", async () => {
      const input = {
        title: "Winter Appeal",
        slug: `winter-${unique(6)}`,
        goal: 5000,
        is_goal_enabled: true,
        min_amount: 5,
        max_amount: 500,
        asks: [10, 25.5, 50],
        shown_fields: ["first_name", "email"],
        required_fields: ["email"],
        tags: ["winter"],
        cost_example_amount: 12.5,
        cost_example_label: "a warm blanket",
      };
      const { body } = await graphql(CREATE, { input }, admin);
      expect(body.errors).toBeUndefined();
      const created = body.data.createCampaign;
      expect(created).toMatchObject({ title: "Winter Appeal", goal: 5000, asks: [10, 25.5, 50], archive_date: null });
      const rest = await server.get(`/api/v1/campaigns/${created.id}`, tenant.token);
      expect(rest.body).toMatchObject({ ...input, id: created.id, has_one_off: true, type: "donation" });

      const byApp = await graphql(CREATE, { input: { title: "From an app" } }, { token: tenant.token });
      expect(byApp.body.data.createCampaign.title).toBe("From an app");
    });

    it("refuses members and applications without the permission", async () => {
      const byMember = await graphql(CREATE, { input: { title: "No" } }, member);
      expect(byMember.body.errors[0]).toMatchObject({
        message: 'Your role (member) does not allow "campaigns:write"',
        extensions: { code: "insufficient_scope" },
      });
      const readOnly = await fakeTenant(server.database.db, { permissions: ["campaigns:read"] });
      const byApp = await graphql(CREATE, { input: { title: "No" } }, { token: readOnly.token });
      expect(byApp.body.errors[0].extensions.code).toBe("insufficient_scope");
      const count = await server.get("/api/v1/campaigns/?q=No", tenant.token);
      expect(count.body.count).toBe(0);
    });

    it("enforces every campaign rule with a field-level error and creates nothing", async () => {
      const before = (await server.get("/api/v1/campaigns/", tenant.token)).body.count;
      // The campaign rules that span fields also name their problem's code (the schema's own checks do not).
      const cases: [Record<string, unknown>, string, string?][] = [
        [{ title: "" }, "title"],
        [{ title: "x", min_amount: 50, max_amount: 10 }, "min_amount", "not_above_field"],
        [{ title: "x", max_amount: 10, asks: [5, 20] }, "asks", "amounts_between_fields"],
        [{ title: "x", default_amount: 3, min_amount: 5 }, "default_amount", "between_fields"],
        [{ title: "x", has_one_off: false, has_subscription: false }, "has_subscription", "one_off_or_recurring"],
        [
          { title: "x", shown_fields: ["email"], required_fields: ["email", "phone"] },
          "required_fields",
          "required_not_shown",
        ],
        [{ title: "x", shown_fields: ["credit_card"] }, "shown_fields.0"],
        [{ title: "x", slug: "Not A Slug" }, "slug"],
        [{ title: "x", goal: 10.555 }, "goal"],
        [{ title: "x", goal: -1 }, "goal"],
        [{ title: "x", is_goal_enabled: true }, "goal", "goal_required"],
        [{ title: "x", cost_example_amount: 10 }, "cost_example_label", "cost_example_pair"],
      ];
      for (const [input, field, code] of cases) {
        const { body } = await graphql(CREATE, { input }, admin);
        expect(body.errors?.[0]?.extensions?.code, JSON.stringify(input)).toBe("invalid_request");
        expect(body.errors[0].extensions.errors[0].field, JSON.stringify(input)).toBe(field);
        if (code) expect(body.errors[0].extensions.errors[0].code, JSON.stringify(input)).toBe(code);
      }
      expect((await server.get("/api/v1/campaigns/", tenant.token)).body.count).toBe(before);
    });

    it("refuses a duplicate slug with 409-style slug_taken", async () => {
      const slug = `dup-${unique(6)}`;
      expect((await graphql(CREATE, { input: { title: "One", slug } }, admin)).body.errors).toBeUndefined();
      const second = await graphql(CREATE, { input: { title: "Two", slug } }, admin);
      expect(second.body.errors[0].extensions).toMatchObject({
        code: "slug_taken",
        errors: [{ field: "slug", message: "is already used by another campaign", code: "campaign_slug_taken" }],
      });
      const elsewhere = await graphql(CREATE, { input: { title: "Other org", slug } }, otherAdmin);
      expect(elsewhere.body.errors).toBeUndefined();
    });

    it("updates, clears with null, archives, and keeps to the organization", async () => {
      const campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
        goal: 100,
        isGoalEnabled: false,
      });
      const UPDATE = `mutation ($id: ID!, $input: CampaignPatch!) { updateCampaign(id: $id, input: $input) { id title goal } }`;
      const updated = await graphql(
        UPDATE,
        { id: String(campaign.id), input: { title: "Renamed", goal: null } },
        admin,
      );
      expect(updated.body.data.updateCampaign).toEqual({ id: campaign.id, title: "Renamed", goal: null });
      const foreign = await graphql(UPDATE, { id: String(campaign.id), input: { title: "Hijack" } }, otherAdmin);
      expect(foreign.body.errors[0].extensions.code).toBe("not_found");
      expect((await server.get(`/api/v1/campaigns/${campaign.id}`, tenant.token)).body.title).toBe("Renamed");

      const ARCHIVE = `mutation ($id: ID!) { archiveCampaign(id: $id) { id archive_date } }`;
      const archived = await graphql(ARCHIVE, { id: String(campaign.id) }, admin);
      expect(archived.body.data.archiveCampaign.archive_date).toMatch(/^\d{4}-/);
      const again = await graphql(ARCHIVE, { id: String(campaign.id) }, admin);
      expect(again.body.data.archiveCampaign.archive_date).toBe(archived.body.data.archiveCampaign.archive_date);
      const list = await server.get("/api/v1/campaigns/?archived=true", tenant.token);
      expect(list.body.items.map((item: { id: number }) => item.id)).toEqual([campaign.id]);
      const active = await server.get("/api/v1/campaigns/?archived=false&limit=1000", tenant.token);
      expect(active.body.items.map((item: { id: number }) => item.id)).not.toContain(campaign.id);
    });
  });

  describe("supporters", () => {
    const CREATE_SUPPORTER = `mutation ($input: SupporterInput!) { createSupporter(input: $input) {
      id first_name email privacy email_marketing tags erase_date } }`;

    it("creates and updates supporters with consents, refusing invalid fields", async () => {
      const created = await graphql(
        CREATE_SUPPORTER,
        { input: { first_name: "Ada", email: "ada@example.test", privacy: true, email_marketing: false } },
        admin,
      );
      const supporter = created.body.data.createSupporter;
      expect(supporter).toMatchObject({ first_name: "Ada", privacy: true, email_marketing: false, erase_date: null });
      const UPDATE = `mutation ($id: ID!, $input: SupporterPatch!) { updateSupporter(id: $id, input: $input) {
        email_marketing sms_marketing first_name } }`;
      const updated = await graphql(
        UPDATE,
        { id: String(supporter.id), input: { email_marketing: true, sms_marketing: true } },
        admin,
      );
      expect(updated.body.data.updateSupporter).toEqual({
        email_marketing: true,
        sms_marketing: true,
        first_name: "Ada",
      });
      for (const [input, field] of [
        [{ email: "not an email" }, "email"],
        [{ sex: "OTHER" }, "sex"],
        [{ date_of_birth: "1990-02-30" }, "date_of_birth"],
        [{ country: "Italy" }, "country"],
        [{}, "email"],
      ] as const) {
        const { body } = await graphql(CREATE_SUPPORTER, { input }, admin);
        expect(body.errors[0].extensions.errors[0].field, JSON.stringify(input)).toBe(field);
      }
    });

    it("exports everything held about a supporter, then erases the personal data but keeps the accounting", async () => {
      const made = await fakeCompletedCheckout(server.database.db, tenant.organizationId);
      const id = String(made.supporter.id);
      const exported = await graphql(
        `mutation ($id: ID!) { exportSupporter(id: $id) { export_date supporter { id email }
          donations { id amount } payments { id amount payment_method { label } } } }`,
        { id },
        admin,
      );
      expect(exported.body.data.exportSupporter).toMatchObject({
        supporter: { id: made.supporter.id, email: made.supporter.email },
        donations: [{ id: made.donation.id, amount: made.donation.amount }],
        payments: [{ id: made.payment.id, payment_method: { label: made.method.label } }],
      });
      const erased = await graphql(
        `mutation ($id: ID!) { eraseSupporter(id: $id) { id first_name last_name email phone privacy tags erase_date } }`,
        { id },
        admin,
      );
      expect(erased.body.data.eraseSupporter).toMatchObject({
        id: made.supporter.id,
        first_name: null,
        last_name: null,
        email: null,
        phone: null,
        privacy: null,
        tags: [],
      });
      expect(erased.body.data.eraseSupporter.erase_date).toMatch(/^\d{4}-/);
      const donation = await server.get(`/api/v1/donations/${made.donation.id}`, tenant.token);
      expect(donation.body).toMatchObject({ id: made.donation.id, supporter_id: made.supporter.id });
      expect((await server.get(`/api/v1/payments/${made.payment.id}`, tenant.token)).status).toBe(200);
      const edit = await graphql(
        `mutation ($id: ID!) { updateSupporter(id: $id, input: { first_name: "Back" }) { id } }`,
        { id },
        admin,
      );
      expect(edit.body.errors[0].extensions.code).toBe("supporter_erased");
    });
  });

  describe("applications", () => {
    const REGISTER = `mutation { registerApplication(name: "Ledger Sync", application_url: "https://ledger.example.test/",
      callback_urls: ["https://ledger.example.test/cb"], permissions: ["donations:read"]) {
      client_secret application { id client_id name callback_urls permissions } } }`;

    const tokenRequest = (clientId: string, secret: string) =>
      fetch(`${server.url}/oauth/token/`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          client_id: clientId,
          client_secret: secret,
          refresh_token: "x",
        }),
      });

    it("registers, rotates the secret, updates callbacks, installs and uninstalls", async () => {
      const registered = (await graphql(REGISTER, {}, admin)).body.data.registerApplication;
      expect(registered.client_secret).toMatch(/^dnt_cs_/);
      expect(registered.application.permissions).toEqual(["donations:read"]);
      const clientId = registered.application.client_id;
      // A known client with a good secret reaches the grant (invalid_grant), a bad secret does not (invalid_client).
      expect((await (await tokenRequest(clientId, registered.client_secret)).json()).error).toBe("invalid_grant");

      const rotated = await graphql(
        `mutation ($c: String!) { rotateApplicationSecret(client_id: $c) { client_secret } }`,
        { c: clientId },
        admin,
      );
      const secret = rotated.body.data.rotateApplicationSecret.client_secret;
      expect(secret).not.toBe(registered.client_secret);
      expect((await tokenRequest(clientId, registered.client_secret)).status).toBe(401);
      expect((await (await tokenRequest(clientId, secret)).json()).error).toBe("invalid_grant");

      const updated = await graphql(
        `mutation ($c: String!) { updateApplication(client_id: $c, callback_urls: ["https://ledger.example.test/new"]) { callback_urls } }`,
        { c: clientId },
        admin,
      );
      expect(updated.body.data.updateApplication.callback_urls).toEqual(["https://ledger.example.test/new"]);
      const badUrl = await graphql(
        `mutation ($c: String!) { updateApplication(client_id: $c, callback_urls: ["javascript:alert(1)"]) { id } }`,
        { c: clientId },
        admin,
      );
      expect(badUrl.body.errors[0].extensions.code).toBe("invalid_request");

      const installed = await graphql(
        `mutation ($c: String!) { installApplication(client_id: $c) { application { client_id } } }`,
        { c: clientId },
        admin,
      );
      expect(installed.body.data.installApplication.application.client_id).toBe(clientId);
      const listed = await graphql(
        `{ installations { application { client_id } } applications { client_id } }`,
        {},
        member,
      );
      expect(
        listed.body.data.installations.map((row: { application: { client_id: string } }) => row.application.client_id),
      ).toContain(clientId);
      expect(listed.body.data.applications.map((row: { client_id: string }) => row.client_id)).toContain(clientId);

      const uninstalled = await graphql(
        `mutation ($c: String!) { uninstallApplication(client_id: $c) { client_id revoked_tokens } }`,
        { c: clientId },
        admin,
      );
      expect(uninstalled.body.data.uninstallApplication).toEqual({ client_id: clientId, revoked_tokens: 0 });
    });

    describe("looking an application up before installing it", () => {
      const LOOK_UP = `query ($c: String!) { applicationToInstall(client_id: $c) {
        client_id name application_url permissions { name description } } }`;
      const INSTALL = `mutation ($c: String!, $p: [String!]) {
        installApplication(client_id: $c, permissions: $p) { application { client_id } } }`;
      const installedIds = async () =>
        (await graphql(`{ installations { application { client_id } } }`, {}, admin)).body.data.installations.map(
          (row: { application: { client_id: string } }) => row.application.client_id,
        );
      /** An application of another organization, as a third party's would be. */
      const registerElsewhere = async (permissions: string[]) => {
        const { body } = await graphql(
          `mutation ($p: [String!]) { registerApplication(name: "Mailer Bridge", application_url: "https://bridge.example.test/app",
            callback_urls: ["https://bridge.example.test/secret-callback"], permissions: $p) { application { client_id } } }`,
          { p: permissions },
          otherAdmin,
        );
        return body.data.registerApplication.application.client_id as string;
      };

      it("shows another organization's application by its public facts only, each permission in words, installing nothing", async () => {
        const clientId = await registerElsewhere(["campaigns:read", "donations:write"]);
        const english = await graphql(LOOK_UP, { c: clientId }, admin, { "accept-language": "en" });
        expect(english.body).toEqual({
          data: {
            applicationToInstall: {
              client_id: clientId,
              name: "Mailer Bridge",
              application_url: "https://bridge.example.test/app",
              permissions: [
                { name: "campaigns:read", description: "Read campaigns" },
                { name: "donations:write", description: "Record offline donations and cancel recurring donations" },
              ],
            },
          },
        });
        // The OAuth consent page's words, in the reader's language.
        const italian = await graphql(LOOK_UP, { c: clientId }, admin, { "accept-language": "it-IT,it;q=0.9" });
        expect(italian.body.data.applicationToInstall.permissions).toEqual([
          { name: "campaigns:read", description: "Leggere le campagne" },
          { name: "donations:write", description: "Registrare donazioni offline e annullare donazioni periodiche" },
        ]);
        // Its callbacks, owner, type and dates are not the installer's to read.
        for (const field of ["callback_urls", "owner_organization_id", "client_type", "id", "create_date"]) {
          const probe = await graphql(
            `query ($c: String!) { applicationToInstall(client_id: $c) { ${field} } }`,
            { c: clientId },
            admin,
          );
          expect(probe.body.errors[0].message).toContain(
            `Cannot query field "${field}" on type "ApplicationToInstall".`,
          );
          expect(probe.body.data).toBeUndefined();
        }
        expect(await installedIds()).not.toContain(clientId);
      });

      it("refuses an unknown client ID on its field, and those who may not install as installApplication does", async () => {
        const unknown = await graphql(LOOK_UP, { c: "dnt_app_000000000000000000000000" }, admin);
        expect(unknown.body.data).toBeNull();
        expect(unknown.body.errors).toEqual([
          expect.objectContaining({
            message: 'No application with client_id "dnt_app_000000000000000000000000"',
            extensions: expect.objectContaining({
              code: "application_not_found",
              errors: [{ field: "client_id", message: "no application has this client ID", code: "unknown_client_id" }],
            }),
          }),
        ]);
        const clientId = await registerElsewhere(["checkouts:read"]);
        for (const who of [member, { token: tenant.token }]) {
          const lookedUp = await graphql(LOOK_UP, { c: clientId }, who);
          const installed = await graphql(INSTALL, { c: clientId }, who);
          expect(lookedUp.body.data).toBeNull();
          expect(lookedUp.body.errors[0].extensions.code).toBe("insufficient_scope");
          expect({ ...lookedUp.body.errors[0], path: null, locations: null }).toEqual({
            ...installed.body.errors[0],
            path: null,
            locations: null,
          });
        }
        expect(await installedIds()).not.toContain(clientId);
      });

      it("installs only what was shown: an application now asking for more is refused and nothing is installed", async () => {
        const clientId = await registerElsewhere(["supporters:read"]);
        const seen = (await graphql(LOOK_UP, { c: clientId }, admin)).body.data.applicationToInstall.permissions.map(
          (permission: { name: string }) => permission.name,
        );
        expect(seen).toEqual(["supporters:read"]);
        // The application asks for more between the look-up and the install.
        await server.database.db
          .update(applications)
          .set({ permissions: ["supporters:read", "supporters:write"] })
          .where(eq(applications.clientId, clientId));
        const refused = await graphql(INSTALL, { c: clientId, p: seen }, admin);
        expect(refused.body.data).toBeNull();
        expect(refused.body.errors[0].message).toBe(
          "Invalid permissions: the application now also asks for supporters:write; look it up again and confirm what it asks",
        );
        expect(refused.body.errors[0].extensions).toMatchObject({
          code: "invalid_request",
          errors: [
            { field: "permissions", code: "permissions_not_shown", values: { permissions: "supporters:write" } },
          ],
        });
        const badName = await graphql(INSTALL, { c: clientId, p: ["supporters:everything"] }, admin);
        expect(badName.body.errors[0].extensions).toMatchObject({
          code: "invalid_request",
          errors: [{ field: "permissions", code: "one_of" }],
        });
        expect(await installedIds()).not.toContain(clientId);

        const again = (await graphql(LOOK_UP, { c: clientId }, admin)).body.data.applicationToInstall.permissions;
        const names = again.map((permission: { name: string }) => permission.name);
        expect(names).toEqual(["supporters:read", "supporters:write"]);
        const installed = await graphql(INSTALL, { c: clientId, p: names }, admin);
        expect(installed.body.data.installApplication.application.client_id).toBe(clientId);
        expect(await installedIds()).toContain(clientId);
      });
    });

    it("registers a public client without a secret, and refuses to rotate the secret it does not have", async () => {
      const registered = await graphql(
        `mutation { registerApplication(name: "Pocket", application_url: "https://pocket.example.test/",
          callback_urls: ["https://pocket.example.test/cb"], permissions: ["checkouts:read"], client_type: "public") {
          client_secret application { client_id client_type permissions } } }`,
        {},
        admin,
      );
      const { client_secret, application } = registered.body.data.registerApplication;
      expect(client_secret).toBeNull();
      expect(application).toMatchObject({ client_type: "public", permissions: ["checkouts:read"] });
      const rotated = await graphql(
        `mutation ($c: String!) { rotateApplicationSecret(client_id: $c) { client_secret } }`,
        { c: application.client_id },
        admin,
      );
      expect(rotated.body.errors[0].message).toBe("A public client has no client secret to rotate");
      expect(rotated.body.errors[0].extensions.code).toBe("public_client");
      const listed = await graphql(`{ applications { client_id client_type } }`, {}, admin);
      expect(listed.body.data.applications).toContainEqual({ client_id: application.client_id, client_type: "public" });
      const unknownType = await graphql(
        `mutation { registerApplication(name: "X", application_url: "https://x.example.test/",
          callback_urls: ["https://x.example.test/cb"], client_type: "secret") { client_secret } }`,
        {},
        admin,
      );
      expect(unknownType.body.errors[0].message).toBe(
        'Invalid client_type: "secret" is not one of confidential, public',
      );
    });

    it("uninstalling revokes the application's tokens at once", async () => {
      const app = await fakeTenant(server.database.db);
      const owner = await signIn(app.slug, "owner");
      expect((await server.get("/api/v1/checkouts/", app.token)).status).toBe(200);
      const result = await graphql(
        `mutation ($c: String!) { uninstallApplication(client_id: $c) { revoked_tokens } }`,
        { c: app.clientId },
        owner,
      );
      expect(result.body.data.uninstallApplication.revoked_tokens).toBe(1);
      expect((await server.get("/api/v1/checkouts/", app.token)).status).toBe(401);
    });

    it("keeps application management to the owning organization's admins", async () => {
      const registered = (await graphql(REGISTER, {}, admin)).body.data.registerApplication;
      const clientId = registered.application.client_id;
      const ROTATE = `mutation ($c: String!) { rotateApplicationSecret(client_id: $c) { client_secret } }`;
      expect((await graphql(ROTATE, { c: clientId }, otherAdmin)).body.errors[0].extensions.code).toBe(
        "application_not_found",
      );
      expect((await graphql(ROTATE, { c: clientId }, member)).body.errors[0].extensions.code).toBe(
        "insufficient_scope",
      );
      expect((await graphql(ROTATE, { c: clientId }, { token: tenant.token })).body.errors[0].extensions.code).toBe(
        "insufficient_scope",
      );
      const apps = await graphql(`{ installations { id } }`, {}, { token: tenant.token });
      expect(apps.body.errors[0].extensions.code).toBe("insufficient_scope");
    });
  });

  it("refuses mutations over GET", async () => {
    const query = encodeURIComponent('mutation { createCampaign(input: { title: "Via GET" }) { id } }');
    const response = await fetch(`${server.url}/admin/graphql/?query=${query}`, {
      headers: { cookie: admin.cookie as string, accept: "application/json" },
    });
    expect(response.status).toBe(405);
    expect((await server.get("/api/v1/campaigns/?q=Via%20GET", tenant.token)).body.count).toBe(0);
  });
  describe("organization bank transfer details", () => {
    const SET = `mutation ($account_name: String, $iban: String, $bic: String) {
      updateOrganizationBankTransfer(account_name: $account_name, iban: $iban, bic: $bic) {
        slug bank_transfer { account_name iban bic } } }`;
    const READ = "{ organization { slug bank_transfer { account_name iban bic } } }";

    it("stores a valid IBAN compact and upper-case, for this organization only", async () => {
      const { body } = await graphql(SET, { iban: "it60 x054 2811 1010 0000 0123 456", bic: "bpmoit22xxx" }, admin);
      expect(body.errors).toBeUndefined();
      expect(body.data.updateOrganizationBankTransfer).toEqual({
        slug: tenant.slug,
        bank_transfer: {
          account_name: expect.stringMatching(/^Org /),
          iban: "IT60X0542811101000000123456",
          bic: "BPMOIT22XXX",
        },
      });
      const named = await graphql(SET, { account_name: "Friends of Kits", iban: "DE89370400440532013000" }, admin);
      expect(named.body.data.updateOrganizationBankTransfer.bank_transfer).toEqual({
        account_name: "Friends of Kits",
        iban: "DE89370400440532013000",
        bic: null,
      });
      // Another organization's admin neither sees nor changes it.
      expect((await graphql(READ, {}, otherAdmin)).body.data.organization).toEqual({
        slug: other.slug,
        bank_transfer: null,
      });
      await graphql(SET, { iban: "GB82WEST12345698765432" }, otherAdmin);
      expect((await graphql(READ, {}, member)).body.data.organization.bank_transfer.iban).toBe(
        "DE89370400440532013000",
      );
      expect((await graphql(READ, {}, otherAdmin)).body.data.organization.bank_transfer.iban).toBe(
        "GB82WEST12345698765432",
      );
    });

    it("refuses a wrong checksum, length, country or BIC with a field-level error and keeps the details", async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ iban: "IT61X0542811101000000123456" }, "iban", "Invalid iban: the check digits do not match (a typo?)"],
        [
          { iban: "IT60X054281110100000012345" },
          "iban",
          "Invalid iban: an IBAN from IT has 27 characters, this one has 26",
        ],
        [
          { iban: "DE8937040044053201300099" },
          "iban",
          "Invalid iban: an IBAN from DE has 22 characters, this one has 24",
        ],
        [{ iban: "ZZ12345678" }, "iban", 'Invalid iban: "ZZ" is not a country that uses IBANs'],
        [
          { iban: "1234" },
          "iban",
          "Invalid iban: an IBAN starts with a country code and 2 check digits, followed by letters and digits",
        ],
        [
          { iban: "DE89370400440532013000", bic: "COBA-DE-FF" },
          "bic",
          "Invalid bic: a BIC has 8 or 11 letters and digits: bank (4 letters), country (2), location (2), optional branch (3)",
        ],
        [{ bic: "COBADEFFXXX" }, "iban", "Invalid iban: enter the IBAN the account holder and BIC belong to"],
        [
          { iban: "DE89370400440532013000", account_name: "x".repeat(71) },
          "account_name",
          "Invalid account_name: at most 70 characters (the SEPA limit)",
        ],
      ];
      for (const [variables, field, message] of cases) {
        const { status, body } = await graphql(SET, variables, admin);
        expect(status).toBe(200);
        expect(body.errors[0], JSON.stringify(variables)).toMatchObject({
          message,
          extensions: { code: "invalid_request", errors: [{ field, code: expect.any(String) }] },
        });
      }
      // The problem's code and particulars travel with its words, for a client that words it itself.
      expect(
        (await graphql(SET, { iban: "IT60X054281110100000012345" }, admin)).body.errors[0].extensions.errors,
      ).toEqual([
        {
          field: "iban",
          code: "iban_length",
          values: { country: "IT", length: 27, actual: 26 },
          message: "an IBAN from IT has 27 characters, this one has 26",
        },
      ]);
      expect((await graphql(READ, {}, admin)).body.data.organization.bank_transfer.iban).toBe("DE89370400440532013000");
    });

    it("is for owners and admins: members and applications are refused", async () => {
      const byMember = await graphql(SET, { iban: "GB82WEST12345698765432" }, member);
      expect(byMember.body.errors[0]).toMatchObject({
        message: 'Your role (member) does not allow "organization:manage"',
        extensions: { code: "insufficient_scope" },
      });
      const byApp = await graphql(SET, { iban: "GB82WEST12345698765432" }, { token: tenant.token });
      expect(byApp.body.errors[0].extensions.code).toBe("insufficient_scope");
      expect((await graphql(READ, {}, admin)).body.data.organization.bank_transfer.iban).toBe("DE89370400440532013000");
    });

    it("clears the details when all are blank", async () => {
      const { body } = await graphql(SET, { account_name: "", iban: " ", bic: null }, otherAdmin);
      expect(body.data.updateOrganizationBankTransfer.bank_transfer).toBeNull();
    });
  });
});
