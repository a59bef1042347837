import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { permissionDescription } from "../../oauth/pages.js";
import {
  type ApplicationToInstall,
  type ApplicationWire,
  createApplication,
  findApplicationToInstall,
  installApplication,
  listInstallations,
  listOwnedApplications,
  rotateApplicationSecret,
  uninstallApplication,
  updateApplication,
} from "./applications.service.js";

const ApplicationType = builder.objectRef<ApplicationWire>("Application").implement({
  description: "A third-party application registered with Donata",
  fields: (t) => ({
    id: t.exposeInt("id"),
    client_id: t.exposeString("client_id"),
    client_type: t.exposeString("client_type", {
      description:
        "confidential (a server that keeps a client secret) or public (a single-page or mobile app: no secret, PKCE, client_id alone at the token endpoint)",
    }),
    name: t.exposeString("name"),
    application_url: t.exposeString("application_url", {
      description: "Opened in the admin panel's iframe with ?__organization=<slug>",
    }),
    callback_urls: t.exposeStringList("callback_urls"),
    permissions: t.exposeStringList("permissions"),
    owner_organization_id: t.exposeInt("owner_organization_id", { nullable: true }),
    create_date: t.exposeString("create_date"),
  }),
});

const RegisteredApplicationType = builder
  .objectRef<ApplicationWire & { client_secret: string | null }>("ApplicationWithSecret")
  .implement({
    description: "An application and its client secret, shown only in this response",
    fields: (t) => ({
      application: t.field({ type: ApplicationType, resolve: (app) => app }),
      client_secret: t.exposeString("client_secret", {
        nullable: true,
        description: "Shown once; only its hash is stored. Null for a public client, which has none",
      }),
    }),
  });

const InstallationType = builder
  .objectRef<{ id: number; create_date: string; application: ApplicationWire }>("Installation")
  .implement({
    description: "An application installed in the organization",
    fields: (t) => ({
      id: t.exposeInt("id"),
      create_date: t.exposeString("create_date"),
      application: t.field({ type: ApplicationType, resolve: (installation) => installation.application }),
    }),
  });

const RequestedPermissionType = builder
  .objectRef<{ name: string; description: string }>("RequestedPermission")
  .implement({
    description: "A permission an application asks for, and what it lets the application do",
    fields: (t) => ({
      name: t.exposeString("name", { description: "Such as campaigns:read" }),
      description: t.exposeString("description", {
        description: "In the reader's language, in the words of the OAuth consent page",
      }),
    }),
  });

const ApplicationToInstallType = builder.objectRef<ApplicationToInstall>("ApplicationToInstall").implement({
  description:
    "What an installer is shown before installing an application, as on the OAuth consent page: its public facts only",
  fields: (t) => ({
    client_id: t.exposeString("client_id"),
    name: t.exposeString("name"),
    application_url: t.exposeString("application_url"),
    permissions: t.field({
      type: [RequestedPermissionType],
      description: "Every permission the application asks for; installing grants them all",
      resolve: (application, _args, context) =>
        application.permissions.map((name) => ({ name, description: permissionDescription(context.locale, name) })),
    }),
  }),
});

const UninstallResultType = builder
  .objectRef<{ client_id: string; revoked_tokens: number }>("UninstallResult")
  .implement({
    fields: (t) => ({
      client_id: t.exposeString("client_id"),
      revoked_tokens: t.exposeInt("revoked_tokens"),
    }),
  });

builder.queryFields((t) => ({
  installations: t.field({
    type: [InstallationType],
    description: "Applications installed in the organization (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "applications:read");
      return listInstallations(context.db, context.scope.organizationId);
    },
  }),
  applicationToInstall: t.field({
    type: ApplicationToInstallType,
    description:
      "Looks an application up by client_id before installing it: its name, address and the permissions it asks (admins only)",
    args: { client_id: t.arg.string({ required: true }) },
    resolve: (_root, { client_id }, context) => {
      authorize(context, "applications:manage");
      return findApplicationToInstall(context.db, client_id);
    },
  }),
  applications: t.field({
    type: [ApplicationType],
    description: "Applications this organization registered (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "applications:read");
      return listOwnedApplications(context.db, context.scope.organizationId);
    },
  }),
}));

builder.mutationFields((t) => ({
  registerApplication: t.field({
    type: RegisteredApplicationType,
    description:
      "Registers an application owned by this organization; a confidential client's secret is returned once, a public client gets none",
    args: {
      name: t.arg.string({ required: true }),
      application_url: t.arg.string({ required: true }),
      callback_urls: t.arg.stringList({ required: true }),
      permissions: t.arg.stringList({ required: false }),
      client_type: t.arg.string({ required: false, description: "confidential (default) or public" }),
    },
    resolve: async (_root, args, context) => {
      authorize(context, "applications:manage");
      const created = await createApplication(
        context.db,
        {
          name: args.name,
          applicationUrl: args.application_url,
          callbackUrls: args.callback_urls,
          permissions: args.permissions ?? undefined,
          clientType: args.client_type ?? undefined,
          ownerOrganizationId: context.scope.organizationId,
        },
        context.scope.origin,
      );
      const [application] = (await listOwnedApplications(context.db, context.scope.organizationId)).filter(
        (candidate) => candidate.client_id === created.client_id,
      );
      if (!application) throw new Error("registered application vanished");
      return { ...application, client_secret: created.client_secret };
    },
  }),
  rotateApplicationSecret: t.field({
    type: RegisteredApplicationType,
    description: "Issues a new client secret; the old one stops working at once",
    args: { client_id: t.arg.string({ required: true }) },
    resolve: (_root, { client_id }, context) => {
      authorize(context, "applications:manage");
      return rotateApplicationSecret(context.db, context.scope.organizationId, client_id, context.scope.origin);
    },
  }),
  updateApplication: t.field({
    type: ApplicationType,
    args: {
      client_id: t.arg.string({ required: true }),
      name: t.arg.string(),
      application_url: t.arg.string(),
      callback_urls: t.arg.stringList(),
    },
    resolve: (_root, args, context) => {
      authorize(context, "applications:manage");
      return updateApplication(
        context.db,
        context.scope.organizationId,
        args.client_id,
        {
          name: args.name ?? undefined,
          applicationUrl: args.application_url ?? undefined,
          callbackUrls: args.callback_urls ?? undefined,
        },
        context.scope.origin,
      );
    },
  }),
  installApplication: t.field({
    type: InstallationType,
    description:
      "Installs an application in the organization, granting every permission it asks (see applicationToInstall)",
    args: {
      client_id: t.arg.string({ required: true }),
      permissions: t.arg.stringList({
        required: false,
        description:
          "The permissions the installer was shown; if the application now asks for any other, it is refused (invalid_request on permissions) and nothing is installed",
      }),
    },
    resolve: async (_root, { client_id, permissions }, context) => {
      authorize(context, "applications:manage");
      await installApplication(
        context.db,
        client_id,
        context.scope.organizationSlug,
        context.scope.origin,
        permissions ?? undefined,
      );
      const installed = (await listInstallations(context.db, context.scope.organizationId)).find(
        (installation) => installation.application.client_id === client_id,
      );
      if (!installed) throw new Error("installation vanished");
      return installed;
    },
  }),
  uninstallApplication: t.field({
    type: UninstallResultType,
    description: "Removes the application from the organization and revokes its tokens at once",
    args: { client_id: t.arg.string({ required: true }) },
    resolve: (_root, { client_id }, context) => {
      authorize(context, "applications:manage");
      return uninstallApplication(context.db, client_id, context.scope.organizationSlug, context.scope.origin);
    },
  }),
}));
