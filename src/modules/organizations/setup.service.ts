import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { systemOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { createSignInLink } from "../../identity/one-time-links.service.js";
import { insertUser } from "../../identity/users.repo.js";
import { findUserByEmail, requireEmailAddress } from "../../identity/users.service.js";
import { upsertMembership } from "../members/members.repo.js";
import { countOrganizations, createOrganization, organizationToWire } from "./organizations.service.js";

export interface FirstOrganization {
  slug: string;
  name: string;
  currency?: string;
  timeZone?: string;
  ownerEmail: string;
  ownerName?: string;
}

export const NO_ORGANIZATION_HINT = "no organization yet: run `npx donata setup` to create the first one and its owner";

/**
 * `donata setup`: on a database without organizations, the first organization and its owner, who has
 * no password yet and gets a one-time setup link to choose one (the caller prints it). Further
 * organizations and users come from the admin panel, `org create` and `user create`.
 */
export async function setUpFirstOrganization(db: Db, input: FirstOrganization) {
  const email = requireEmailAddress(input.ownerEmail);
  const ownerName = input.ownerName?.trim() || null;
  if (ownerName && ownerName.length > 200) {
    throw new AppError("invalid_request", "Invalid name: at most 200 characters", {
      errors: [{ field: "name", message: "at most 200 characters" }],
    });
  }
  return withEvents(db, async (tx) => {
    if ((await countOrganizations(tx)) > 0) {
      throw new AppError(
        "already_set_up",
        "This database already has an organization; add more with `donata org create` and `donata user create`, or get a sign-in link with `donata user link --email E`",
      );
    }
    const organization = await createOrganization(tx, {
      slug: input.slug,
      name: input.name,
      currency: input.currency,
      timeZone: input.timeZone,
    });
    // An account made earlier (`user create` without an organization) becomes the owner as it is.
    const user =
      (await findUserByEmail(tx, email)) ?? (await insertUser(tx, { email, passwordHash: null, name: ownerName }));
    await upsertMembership(tx, organization.id, user.id, "owner");
    await recordEvent(
      tx,
      { organizationId: organization.id, origin: systemOrigin("cli") },
      "membership.created",
      user.id,
      { user_id: user.id, email: user.email, role: "owner" },
    );
    const token = await createSignInLink(tx, user.id, "setup");
    return { organization: organizationToWire(organization), owner: { id: user.id, email: user.email }, token };
  });
}
