import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * A signed-in donor: an email address within one organization. Every supporter record of that
 * organization with this email (compared case-insensitively) is theirs; nothing else is.
 */
export interface DonorSession {
  organizationId: number;
  organizationSlug: string;
  /** The email the donor signed in with, lower-cased. */
  email: string;
  /** Every form of the portal posts it back (field `csrf`); `checkDonorCsrf` compares. */
  csrfToken: string;
}

/** The portal's base path for an organization: `/donor/{slug}/`. */
export function portalPath(organizationSlug: string, rest = ""): string {
  return `/donor/${encodeURIComponent(organizationSlug)}/${rest}`;
}

/**
 * The donor signed in for the organization of the URL's `:org` parameter, or undefined after
 * redirecting the browser to the sign-in page (303). Implemented in portal-auth (helper P1).
 */
export type RequireDonor = (request: FastifyRequest, reply: FastifyReply) => Promise<DonorSession | undefined>;
