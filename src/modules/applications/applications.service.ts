import { randomBytes } from "node:crypto";
import { PERMISSIONS } from "../../auth/permissions.js";
import type { Db, Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { changesOf, recordEvent, withEvents } from "../../events/record-event.js";
import { fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { generateSecret, hashSecret } from "../../identity/secrets.js";
import { revokeInstallationTokens } from "../../oauth/tokens.repo.js";
import { issueTokenPair, type TokenLifetimes } from "../../oauth/tokens.service.js";
import { requireOrganization } from "../organizations/organizations.service.js";
import {
  type ApplicationRow,
  deleteInstallation,
  findApplicationByClientId,
  findInstallation,
  insertApplication,
  insertInstallation,
  listInstallationRows,
  listOwnedApplicationRows,
  updateApplicationRow,
} from "./applications.repo.js";

export { PERMISSIONS };

const invalid = (field: string, message: string) =>
  new AppError("invalid_request", `Invalid ${field}: ${message}`, { errors: [{ field, message }] });

/** Absolute http(s) URL without a fragment (RFC 6749 §3.1.2). */
export function checkApplicationUrl(field: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(field, `"${raw}" is not an absolute URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid(field, "must be an http(s) URL");
  if (url.hash || raw.includes("#")) throw invalid(field, "must not contain a fragment");
  return raw;
}

export const CLIENT_TYPES = ["confidential", "public"] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

export interface NewApplication {
  name: string;
  applicationUrl: string;
  callbackUrls: string[];
  permissions?: string[];
  ownerOrganizationId?: number;
  /** public: a single-page or mobile app, which cannot keep a secret; it gets none and must use PKCE. */
  clientType?: string;
}

export interface RegisteredApplication<Secret extends string | null = string | null> {
  id: number;
  client_id: string;
  client_secret: Secret;
  client_type: ClientType;
  name: string;
  application_url: string;
  callback_urls: string[];
  permissions: string[];
}

/** Registers an application; a confidential client's secret is returned here once, a public client has none. */
export async function createApplication(
  db: Db,
  input: NewApplication & { clientType: "public" },
  origin?: EventOrigin,
): Promise<RegisteredApplication<null>>;
export async function createApplication(
  db: Db,
  input: NewApplication & { clientType?: "confidential" },
  origin?: EventOrigin,
): Promise<RegisteredApplication<string>>;
export async function createApplication(
  db: Db,
  input: NewApplication,
  origin?: EventOrigin,
): Promise<RegisteredApplication>;
export async function createApplication(
  db: Db,
  input: NewApplication,
  origin?: EventOrigin,
): Promise<RegisteredApplication> {
  const clientType = input.clientType ?? "confidential";
  if (!(CLIENT_TYPES as readonly string[]).includes(clientType)) {
    throw invalid("client_type", `"${clientType}" is not one of ${CLIENT_TYPES.join(", ")}`);
  }
  if (!input.name.trim()) throw invalid("name", "must not be empty");
  checkApplicationUrl("url", input.applicationUrl);
  if (input.callbackUrls.length === 0) throw invalid("callback", "at least one callback URL is required");
  for (const callback of input.callbackUrls) checkApplicationUrl("callback", callback);
  const permissions = input.permissions ?? [...PERMISSIONS];
  for (const permission of permissions) {
    if (!(PERMISSIONS as readonly string[]).includes(permission)) {
      throw invalid("permission", `"${permission}" is not one of ${PERMISSIONS.join(", ")}`);
    }
  }
  const clientId = `dnt_app_${randomBytes(12).toString("hex")}`;
  const clientSecret = clientType === "public" ? null : generateSecret("dnt_cs");
  const owner = input.ownerOrganizationId ?? null;
  const row = await withEvents(db, async (tx) => {
    const inserted = await insertApplication(tx, {
      clientId,
      clientType: clientType as ClientType,
      clientSecretHash: clientSecret === null ? null : hashSecret(clientSecret),
      name: input.name.trim(),
      applicationUrl: input.applicationUrl,
      callbackUrls: [...new Set(input.callbackUrls)],
      permissions,
      ownerOrganizationId: owner,
    });
    // An organization's own application is in its audit log; a platform-wide one (the CLI's) in none.
    if (owner !== null) {
      await recordEvent(
        tx,
        { organizationId: owner, origin },
        "application.created",
        inserted.id,
        applicationToWire(inserted),
      );
    }
    return inserted;
  });
  return {
    id: row.id,
    client_id: row.clientId,
    client_secret: clientSecret,
    client_type: row.clientType,
    name: row.name,
    application_url: row.applicationUrl,
    callback_urls: row.callbackUrls,
    permissions: row.permissions,
  };
}

export async function requireApplication(tx: Executor, clientId: string) {
  const row = await findApplicationByClientId(tx, clientId);
  if (!row) {
    throw new AppError("application_not_found", `No application with client_id "${clientId}"`, {
      errors: [fieldIssue("client_id", fieldProblem("unknown_client_id"))],
    });
  }
  return row;
}

/** What anyone about to install an application is shown, as on the OAuth consent page: never its callbacks or owner. */
export interface ApplicationToInstall {
  client_id: string;
  name: string;
  application_url: string;
  permissions: string[];
}

export async function findApplicationToInstall(db: Db, clientId: string): Promise<ApplicationToInstall> {
  const application = await requireApplication(db, clientId);
  return {
    client_id: application.clientId,
    name: application.name,
    application_url: application.applicationUrl,
    permissions: application.permissions,
  };
}

function checkPermissionNames(permissions: readonly string[]) {
  const unknown = permissions.filter((permission) => !(PERMISSIONS as readonly string[]).includes(permission));
  if (unknown.length > 0) {
    throw new AppError(
      "invalid_request",
      `Invalid permissions: "${unknown[0]}" is not one of ${PERMISSIONS.join(", ")}`,
      {
        errors: [fieldIssue("permissions", fieldProblem("one_of", { choices: PERMISSIONS.join(", ") }))],
      },
    );
  }
}

/**
 * Installs an application in the organization. `seenPermissions`, when given, are the permissions
 * the installer was shown: an application that now asks for any other is refused, never granted more.
 */
export async function installApplication(
  db: Db,
  clientId: string,
  organizationSlug: string,
  origin?: EventOrigin,
  seenPermissions?: readonly string[],
) {
  if (seenPermissions !== undefined) checkPermissionNames(seenPermissions);
  return withEvents(db, async (tx) => {
    const application = await requireApplication(tx, clientId);
    if (seenPermissions !== undefined) {
      const unseen = application.permissions.filter((permission) => !seenPermissions.includes(permission));
      if (unseen.length > 0) {
        const list = unseen.join(", ");
        throw new AppError(
          "invalid_request",
          `Invalid permissions: the application now also asks for ${list}; look it up again and confirm what it asks`,
          { errors: [fieldIssue("permissions", fieldProblem("permissions_not_shown", { permissions: list }))] },
        );
      }
    }
    const organization = await requireOrganization(tx, organizationSlug);
    const installed = await insertInstallation(tx, organization.id, application.id);
    if (installed) {
      await recordEvent(
        tx,
        { organizationId: organization.id, origin },
        "application.installed",
        application.id,
        applicationToWire(application),
      );
    }
    return { client_id: application.clientId, organization: organization.slug, installed };
  });
}

/** Uninstalling revokes every token the application holds for the organization. */
export async function uninstallApplication(db: Db, clientId: string, organizationSlug: string, origin?: EventOrigin) {
  return withEvents(db, async (tx) => {
    const application = await requireApplication(tx, clientId);
    const organization = await requireOrganization(tx, organizationSlug);
    if (!(await deleteInstallation(tx, organization.id, application.id))) {
      throw new AppError("not_installed", `The application is not installed in "${organization.slug}"`);
    }
    const revokedTokens = await revokeInstallationTokens(tx, organization.id, application.id);
    await recordEvent(tx, { organizationId: organization.id, origin }, "application.uninstalled", application.id, {
      ...applicationToWire(application),
      revoked_tokens: revokedTokens,
    });
    return { client_id: application.clientId, organization: organization.slug, revoked_tokens: revokedTokens };
  });
}

/** Issues a token pair for an installation exactly as the authorization code grant does. */
export async function createInstallationToken(
  db: Db,
  lifetimes: TokenLifetimes,
  clientId: string,
  organizationSlug: string,
) {
  return db.transaction(async (tx) => {
    const application = await requireApplication(tx, clientId);
    const organization = await requireOrganization(tx, organizationSlug);
    const installation = await findInstallation(tx, organization.id, application.id);
    if (!installation) {
      throw new AppError("not_installed", `The application is not installed in "${organization.slug}"`);
    }
    const { id: _id, ...tokens } = await issueTokenPair(tx, lifetimes, {
      organizationId: organization.id,
      organizationSlug: organization.slug,
      applicationId: application.id,
    });
    return { ...tokens, scope: application.permissions.join(" ") };
  });
}

export type { ApplicationRow };

export function applicationToWire(row: ApplicationRow) {
  return {
    id: row.id,
    client_id: row.clientId,
    client_type: row.clientType,
    name: row.name,
    application_url: row.applicationUrl,
    callback_urls: row.callbackUrls,
    permissions: row.permissions,
    owner_organization_id: row.ownerOrganizationId,
    create_date: row.createDate.toISOString(),
  };
}
export type ApplicationWire = ReturnType<typeof applicationToWire>;

export async function listInstallations(db: Db, organizationId: number) {
  const rows = await listInstallationRows(db, organizationId);
  return rows.map(({ installation, application }) => ({
    id: installation.id,
    create_date: installation.createDate.toISOString(),
    application: applicationToWire(application),
  }));
}

/** Applications registered by the organization; only its admins may change them. */
export async function listOwnedApplications(db: Db, organizationId: number) {
  return (await listOwnedApplicationRows(db, organizationId)).map(applicationToWire);
}

async function requireOwnedApplication(tx: Executor, organizationId: number, clientId: string) {
  const application = await requireApplication(tx, clientId);
  if (application.ownerOrganizationId !== organizationId) {
    throw new AppError(
      "application_not_found",
      `No application with client_id "${clientId}" is registered by this organization`,
    );
  }
  return application;
}

/** A new client secret, shown once; the previous one stops working at once. */
export async function rotateApplicationSecret(db: Db, organizationId: number, clientId: string, origin?: EventOrigin) {
  return withEvents(db, async (tx) => {
    const application = await requireOwnedApplication(tx, organizationId, clientId);
    if (application.clientType === "public") {
      throw new AppError("public_client", "A public client has no client secret to rotate");
    }
    const clientSecret = generateSecret("dnt_cs");
    const row = await updateApplicationRow(tx, application.id, {
      clientSecretHash: hashSecret(clientSecret),
      updateDate: new Date(),
    });
    const after = applicationToWire(row);
    await recordEvent(tx, { organizationId, origin }, "application.updated", row.id, after, {
      before: applicationToWire(application),
      also: { client_secret: { before: "(the previous secret)", after: "(a new secret, shown once)" } },
    });
    return { ...after, client_secret: clientSecret };
  });
}

export interface ApplicationChanges {
  name?: string;
  applicationUrl?: string;
  callbackUrls?: string[];
}

export async function updateApplication(
  db: Db,
  organizationId: number,
  clientId: string,
  changes: ApplicationChanges,
  origin?: EventOrigin,
) {
  if (changes.name !== undefined && !changes.name.trim()) throw invalid("name", "must not be empty");
  if (changes.applicationUrl !== undefined) checkApplicationUrl("application_url", changes.applicationUrl);
  if (changes.callbackUrls !== undefined) {
    if (changes.callbackUrls.length === 0) throw invalid("callback_urls", "at least one callback URL is required");
    for (const callback of changes.callbackUrls) checkApplicationUrl("callback_urls", callback);
  }
  return withEvents(db, async (tx) => {
    const application = await requireOwnedApplication(tx, organizationId, clientId);
    const row = await updateApplicationRow(tx, application.id, {
      ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
      ...(changes.applicationUrl !== undefined ? { applicationUrl: changes.applicationUrl } : {}),
      ...(changes.callbackUrls !== undefined ? { callbackUrls: [...new Set(changes.callbackUrls)] } : {}),
      updateDate: new Date(),
    });
    const after = applicationToWire(row);
    const before = applicationToWire(application);
    if (changesOf(before, after)) {
      await recordEvent(tx, { organizationId, origin }, "application.updated", row.id, after, { before });
    }
    return after;
  });
}
