import type { RateLimitRules } from "../../config.js";
import type { Db, Executor } from "../../db/client.js";
import { enqueueEmail } from "../../email/outbox.repo.js";
import type { DeliveryLink } from "../../email/render.js";
import {
  DONOR_LINK_PREFIX,
  type DonorLinkPurpose,
  endDonorSession,
  enterWithDonorLink,
  mintDonorLinkToken,
  sweepExpiredDonorCredentials,
} from "../../identity/donor-sessions.service.js";
import { normalizeEmail } from "../../identity/users.service.js";
import { clientAddressKey } from "../../limits/client-address.js";
import { countWork, hashedKey } from "../../limits/counted-work.js";
import type { LimitRule, LimitStore } from "../../limits/rate-limiter.js";
import { listSupporterRows } from "../supporters/supporters.repo.js";
import { type PortalOrganization, portalPath, portalReturnPath } from "./donor-session.js";

/** The page a link opens: it signs the donor in, then shows their portal. */
function enterUrl(baseUrl: string, organizationSlug: string, token: string, next: string | undefined) {
  const query = new URLSearchParams({ token, ...(next ? { next } : {}) });
  return `${baseUrl.replace(/\/+$/, "")}${portalPath(organizationSlug, "enter")}?${query}`;
}

/**
 * What a stored message carries instead of a donor portal token: its link signs nobody in. The
 * delivery puts a token minted for that attempt in its place (src/jobs/email.job.ts), so no copy
 * kept in the outbox (queued, refused, failed or sent) is a way into a donor's portal.
 */
export const PORTAL_TOKEN_PLACEHOLDER = `${DONOR_LINK_PREFIX}_redacted`;

/** Every donor portal token in a text (the placeholder included). */
export const PORTAL_TOKENS = /dnt_dl_[A-Za-z0-9_-]+/g;

/** A portal link as a message is stored: the placeholder where the token goes. */
export function portalLinkPlaceholder(baseUrl: string, organizationSlug: string, next?: string) {
  return enterUrl(baseUrl, organizationSlug, PORTAL_TOKEN_PLACEHOLDER, portalReturnPath(next));
}

/** How a message's portal link is delivered (DeliveryLink): a token minted for the address it goes to. */
export const portalDeliveryLink = (purpose: DonorLinkPurpose): DeliveryLink => ({
  placeholder: PORTAL_TOKEN_PLACEHOLDER,
  tokens: PORTAL_TOKENS,
  capturedCopyKeepsLink: true,
  mint: (tx, row) => mintDonorLinkToken(tx, { organizationId: row.organizationId, email: row.toAddress, purpose }),
});

/**
 * A link that signs its donor in to the organization's portal, for a receipt: reusable for 30
 * days, so the receipt keeps working. Only the link's hash is stored. `next` opens a page of the
 * portal after signing in (`gifts/12`) instead of its home.
 */
export async function mintReceiptLink(
  tx: Executor,
  link: { organizationId: number; organizationSlug: string; email: string; baseUrl: string; next?: string },
): Promise<string> {
  const token = await mintDonorLinkToken(tx, { ...link, purpose: "receipt" });
  return enterUrl(link.baseUrl, link.organizationSlug, token, portalReturnPath(link.next));
}

/** The counters of sign-in link requests: per client address, and per email within an organization. */
export interface DonorSignInThrottle {
  store: LimitStore;
  rules: Pick<RateLimitRules, "signInAccount" | "signInAddress">;
}

export const TOO_MANY_LINK_REQUESTS = "Too many sign-in links were asked for. Wait a few minutes and try again.";

/** The donor limits take the sign-in limits' sizes (RATE_LIMIT_SIGN_IN_*) under names of their own. */
function donorRules(rules: DonorSignInThrottle["rules"]): { email: LimitRule; address: LimitRule } {
  return {
    email: { ...rules.signInAccount, name: "donor_sign_in_email" },
    address: { ...rules.signInAddress, name: "donor_sign_in_address" },
  };
}

/** An uncounted request could mail a donor without limit: an unreachable store refuses it for a moment instead. */
async function countLinkRequest(throttle: DonorSignInThrottle, organizationId: number, email: string, ip: string) {
  const rules = donorRules(throttle.rules);
  await countWork(
    throttle.store,
    [
      { rule: rules.email, key: hashedKey(`${organizationId}:${email}`) },
      { rule: rules.address, key: clientAddressKey(ip) },
    ],
    TOO_MANY_LINK_REQUESTS,
  );
}

/**
 * The sign-in form, before it answers: counts the request (refused past the limits). It does the
 * same whether or not the email is known, so the answer's timing tells nobody either.
 */
export async function countSignInRequest(
  throttle: DonorSignInThrottle,
  request: { organization: PortalOrganization; email: string; ip: string },
) {
  await countLinkRequest(throttle, request.organization.id, normalizeEmail(request.email), request.ip);
}

/**
 * The sign-in form, once it has answered: only if a supporter of this organization has the email,
 * queues the sign-in email (its link minted when it is delivered, see PORTAL_TOKEN_PLACEHOLDER).
 */
export async function queueSignInLink(
  db: Db,
  request: { organization: PortalOrganization; email: string; baseUrl: string; next?: string | undefined },
) {
  const email = normalizeEmail(request.email);
  const { organization } = request;
  await db.transaction(async (tx) => {
    const scope = { organizationId: organization.id, timeZone: organization.timeZone };
    const { rows } = await listSupporterRows(
      tx,
      scope,
      { email },
      { field: "id", descending: false },
      { limit: 1, offset: 0 },
    );
    const supporter = rows[0];
    if (!supporter?.email) return;
    await enqueueEmail(tx, {
      organizationId: organization.id,
      kind: "donor_sign_in",
      to: supporter.email,
      supporterId: supporter.id,
      data: { url: portalLinkPlaceholder(request.baseUrl, organization.slug, request.next) },
    });
    await sweepExpiredDonorCredentials(tx, organization.id);
  });
}

/**
 * Follows a link into the portal (src/identity/donor-sessions.service.ts): a live one opens a new session
 * for its email. Returns the session's cookie token, or undefined when the link is unknown, expired or used.
 */
export function enterWithLink(
  db: Db,
  organization: PortalOrganization,
  token: string,
  previousSessionToken: string | undefined,
  context: { userAgent?: string; ipAddress?: string } = {},
): Promise<string | undefined> {
  return enterWithDonorLink(db, organization.id, token, previousSessionToken, context);
}

export async function signOutDonor(db: Db, organization: PortalOrganization, sessionToken: string | undefined) {
  await endDonorSession(db, organization.id, sessionToken);
}
