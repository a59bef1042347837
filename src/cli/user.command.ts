import { ROLES, type Role } from "../auth/actor.js";
import { systemOrigin } from "../events/origin.js";
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
