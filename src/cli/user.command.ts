import { ROLES, type Role } from "../auth/actor.js";
import { systemOrigin } from "../events/origin.js";
import { resetSecondFactors } from "../identity/second-factor.service.js";
import { createUser } from "../modules/users/users.service.js";
import { type Command, requiredString, UsageError } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const userCreateCommand: Command = {
  name: "user create",
  usage: "donata user create --email E --password P [--org S --role owner|admin|member] [--json]",
  summary: "Create a user, or add an existing one to an organization",
  options: {
    email: { type: "string" },
    password: { type: "string" },
    org: { type: "string" },
    role: { type: "string" },
  },
  async run(values, io) {
    const email = requiredString(values, "email");
    const role = values.role as string | undefined;
    if (role !== undefined && !(ROLES as readonly string[]).includes(role)) {
      throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
    }
    if (role !== undefined && values.org === undefined) throw new UsageError("--role needs --org");
    const user = await withDatabase(io.env, ({ database }) =>
      createUser(
        database.db,
        {
          email,
          password: values.password as string | undefined,
          organization: values.org as string | undefined,
          role: role as Role | undefined,
        },
        systemOrigin("cli"),
      ),
    );
    const membership = user.organization ? ` as ${user.role} of ${user.organization}` : "";
    return {
      json: user,
      text: [`${user.created ? "Created" : "Found existing"} user ${user.email}${membership}`],
    };
  },
};

export const userResetSecondFactorCommand: Command = {
  name: "user reset-second-factor",
  usage: "donata user reset-second-factor --email E [--json]",
  summary: "Remove a user's second factors (app, passkeys, recovery codes) and sign them out everywhere",
  options: { email: { type: "string" } },
  async run(values, io) {
    const email = requiredString(values, "email");
    const reset = await withDatabase(io.env, ({ database }) =>
      resetSecondFactors(database.db, email, systemOrigin("cli")),
    );
    const removed = [
      ...(reset.totp ? ["the authenticator app"] : []),
      ...(reset.passkeys > 0 ? [`${reset.passkeys} passkey${reset.passkeys === 1 ? "" : "s"}`] : []),
    ];
    const sessions = `${reset.sessionsEnded} session${reset.sessionsEnded === 1 ? "" : "s"} ended`;
    return {
      json: {
        user: { id: reset.userId, email: reset.email },
        removed: { totp: reset.totp, passkeys: reset.passkeys },
        sessions_ended: reset.sessionsEnded,
        must_set_up: reset.enrol,
      },
      text: [
        removed.length > 0
          ? `Removed ${removed.join(" and ")} of ${reset.email}, with the recovery codes; ${sessions}`
          : `${reset.email} had no second factor; ${sessions}`,
        reset.enrol.length > 0
          ? `At the next sign-in they set up a new one first (${reset.enrol.join(", ")} requires it of its owners and admins).`
          : "They sign in with their password alone until they set up a new one on their account's security page.",
      ],
    };
  },
};
