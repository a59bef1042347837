import { createOrganization, organizationToWire } from "../modules/organizations/organizations.service.js";
import { type Command, requiredString } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const orgCreateCommand: Command = {
  name: "org create",
  usage: "donata org create --slug S --name N [--currency C] [--timezone TZ] [--json]",
  summary: "Create an organization",
  options: {
    slug: { type: "string" },
    name: { type: "string" },
    currency: { type: "string" },
    timezone: { type: "string" },
  },
  async run(values, io) {
    const slug = requiredString(values, "slug");
    const name = requiredString(values, "name");
    const row = await withDatabase(io.env, ({ database }) =>
      createOrganization(database.db, {
        slug,
        name,
        currency: values.currency as string | undefined,
        timeZone: values.timezone as string | undefined,
      }),
    );
    const organization = organizationToWire(row);
    return {
      json: organization,
      text: [`Created organization ${organization.slug} (${organization.currency}, ${organization.time_zone})`],
    };
  },
};
