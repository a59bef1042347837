import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { generateSecret, hashSecret } from "../identity/secrets.js";
import type { SessionUser } from "../identity/sessions.service.js";
import { findApplicationByClientId, findInstallation } from "../modules/applications/applications.repo.js";
import { installApplication } from "../modules/applications/applications.service.js";
import { listMembershipsOfUser } from "../modules/members/members.repo.js";
import type { ApplicationRow } from "./client-auth.js";
import { insertAuthorizationCode } from "./grants.repo.js";
import { PKCE_VALUE } from "./pkce.js";
import { checkRequestedScope } from "./scope.js";

export const AUTHORIZE_PARAMETERS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "code_challenge_method",
  "code_challenge",
  "state",
  "scope",
  "__organization",
] as const;
export type AuthorizeParameters = Partial<Record<(typeof AUTHORIZE_PARAMETERS)[number], string>>;

export interface MembershipChoice {
  id: number;
  slug: string;
  name: string;
  role: string;
}

/** Why a request is refused with a page instead of a redirect (the page says it in the user's language). */
export type AuthorizeErrorPage =
  | "client_id_missing"
  | "unknown_application"
  | "redirect_uri_missing"
  | "invalid_redirect_uri";

export type AuthorizeOutcome =
  | { kind: "error_page"; error: AuthorizeErrorPage }
  | { kind: "redirect"; location: string }
  | { kind: "login"; application: ApplicationRow }
  | { kind: "choose"; application: ApplicationRow; organizations: MembershipChoice[] }
  | { kind: "consent"; application: ApplicationRow; organization: MembershipChoice }
  | { kind: "ask_admin"; application: ApplicationRow; organization: MembershipChoice };

/** What the user decided on a page of the flow; only read from a CSRF-checked POST. */
export interface AuthorizeDecision {
  organization?: string;
  decision?: string;
}

function callback(redirectUri: string, issuer: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.append(name, value);
  url.searchParams.append("iss", issuer);
  return url.toString();
}

/** Step 1: the client and its exact callback. Failures never redirect (RFC 6749 §4.1.2.1). */
async function checkClient(db: Db, params: AuthorizeParameters): Promise<ApplicationRow | AuthorizeErrorPage> {
  if (!params.client_id) return "client_id_missing";
  const application = await findApplicationByClientId(db, params.client_id);
  if (!application) return "unknown_application";
  if (!params.redirect_uri) return "redirect_uri_missing";
  if (!application.callbackUrls.includes(params.redirect_uri)) return "invalid_redirect_uri";
  return application;
}

/** Step 2: the rest of the request; failures go back to the client's callback. */
function checkRequest(
  params: AuthorizeParameters,
  repeated: string[],
  application: ApplicationRow,
): [string, string] | { scope: string[] | null } {
  if (repeated.length > 0) return ["invalid_request", `${repeated.join(", ")} must appear only once`];
  if (!params.state) return ["invalid_request", "state is required"];
  if (params.response_type !== "code") return ["unsupported_response_type", "response_type must be code"];
  if (params.code_challenge_method !== "S256") {
    return ["invalid_request", "code_challenge_method must be S256 (PKCE is required; plain is not allowed)"];
  }
  if (!params.code_challenge || !PKCE_VALUE.test(params.code_challenge)) {
    return ["invalid_request", "code_challenge must be 43 to 128 base64url characters"];
  }
  const scope = checkRequestedScope(params.scope, application.permissions);
  return "error" in scope ? ["invalid_scope", scope.error] : scope;
}

async function membershipsOf(db: Db, userId: number): Promise<MembershipChoice[]> {
  const rows = await listMembershipsOfUser(db, userId);
  return rows.map(({ id, slug, name, role }) => ({ id, slug, name, role }));
}

/**
 * The authorization endpoint as a pipeline: client and callback → request → session →
 * organization → installation → code. Each step either passes or ends the flow with a page or
 * a redirect.
 */
export async function authorize(
  db: Db,
  config: Config,
  params: AuthorizeParameters,
  session: SessionUser | undefined,
  decision: AuthorizeDecision,
  repeated: string[] = [],
): Promise<AuthorizeOutcome> {
  const application = await checkClient(db, params);
  if (typeof application === "string") return { kind: "error_page", error: application };
  const redirectUri = params.redirect_uri as string;
  const fail = (error: string, description: string): AuthorizeOutcome => ({
    kind: "redirect",
    location: callback(redirectUri, config.authUrl, { error, error_description: description, state: params.state }),
  });

  const checked = checkRequest(params, repeated, application);
  if (Array.isArray(checked)) return fail(...checked);
  if (!session) return { kind: "login", application };

  const choices = await membershipsOf(db, session.userId);
  const wanted = params.__organization ?? decision.organization;
  let organization: MembershipChoice | undefined;
  if (wanted !== undefined) {
    organization = choices.find((choice) => choice.slug === wanted);
    if (!organization) return fail("access_denied", "You are not a member of the requested organization");
  } else if (choices.length === 1) {
    organization = choices[0];
  } else if (choices.length === 0) {
    return fail("access_denied", "Your account does not belong to any organization");
  } else {
    return { kind: "choose", application, organizations: choices };
  }
  if (!organization) return fail("access_denied", "No organization was chosen");

  if (!(await findInstallation(db, organization.id, application.id))) {
    if (organization.role !== "owner" && organization.role !== "admin") {
      return { kind: "ask_admin", application, organization };
    }
    if (decision.decision === "deny") return fail("access_denied", "The installation was denied");
    if (decision.decision !== "allow") return { kind: "consent", application, organization };
    await installApplication(db, application.clientId, organization.slug, {
      actor: { type: "user", user_id: session.userId, label: session.email },
      requestId: null,
      ip: null,
      userAgent: null,
    });
  }

  const code = generateSecret("dnt_ac");
  await insertAuthorizationCode(db, {
    organizationId: organization.id,
    applicationId: application.id,
    userId: session.userId,
    codeHash: hashSecret(code),
    redirectUri,
    codeChallenge: params.code_challenge as string,
    scope: checked.scope,
    expiresDate: new Date(Date.now() + config.authorizationCodeTtlSeconds * 1000),
  });
  return { kind: "redirect", location: callback(redirectUri, config.authUrl, { code, state: params.state }) };
}
