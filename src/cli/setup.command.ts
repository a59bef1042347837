import { createInterface } from "node:readline/promises";
import { createResetLink, SIGN_IN_LINK_LIFETIME_SECONDS, signInLinkUrl } from "../identity/one-time-links.service.js";
import { setUpFirstOrganization } from "../modules/organizations/setup.service.js";
import { type CliIo, type Command, type CommandValues, requiredString, UsageError } from "./cli-kit.js";
import { withDatabase } from "./database.js";

const REQUIRED = ["org-slug", "org-name", "email"] as const;

/** A slug proposed from an organization's name: "Amici del Parco" → "amici-del-parco". */
export function slugOf(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return slug || "organization";
}

function machineTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** Asks on the terminal for whatever the flags did not say; answers go to stderr so --json stays clean. */
async function askMissing(values: CommandValues, io: CliIo): Promise<CommandValues> {
  const stdin = io.stdin ?? process.stdin;
  const missing = REQUIRED.filter((name) => typeof values[name] !== "string" || values[name] === "");
  if (missing.length === 0) return values;
  if (!stdin.isTTY) {
    throw new UsageError(
      `${missing.map((name) => `--${name}`).join(", ")} required (or run it in a terminal to be asked)`,
    );
  }
  const prompt = createInterface({ input: stdin, output: io.stderr, terminal: false });
  const answers: CommandValues = { ...values };
  const ask = async (name: string, question: string, fallback?: string) => {
    if (typeof answers[name] === "string" && answers[name] !== "") return;
    for (;;) {
      const answer = (await prompt.question(fallback ? `${question} [${fallback}]: ` : `${question}: `)).trim();
      if (answer || fallback !== undefined) {
        answers[name] = answer || fallback;
        return;
      }
    }
  };
  try {
    io.stderr.write("Set up the first organization and its owner (Enter accepts the [default]).\n");
    await ask("org-name", "Organization name");
    await ask("org-slug", "Short name in URLs", slugOf(String(answers["org-name"])));
    await ask("currency", "Currency (ISO 4217)", "EUR");
    await ask("timezone", "Time zone", machineTimeZone());
    await ask("email", "Owner's email");
    await ask("name", "Owner's name (optional)", "");
  } finally {
    prompt.close();
  }
  return answers;
}

export const setupCommand: Command = {
  name: "setup",
  usage:
    "donata setup --org-slug S --org-name N [--currency EUR] [--timezone TZ] --email E [--name N] [--json]\n" +
    "       (in a terminal, asks for what is missing)",
  summary: "Create the first organization and its owner; prints a one-time link to choose the password",
  options: {
    "org-slug": { type: "string" },
    "org-name": { type: "string" },
    currency: { type: "string" },
    timezone: { type: "string" },
    email: { type: "string" },
    name: { type: "string" },
  },
  prepare: askMissing,
  async run(values, io) {
    const input = {
      slug: requiredString(values, "org-slug"),
      name: requiredString(values, "org-name"),
      currency: (values.currency as string | undefined) || undefined,
      timeZone: (values.timezone as string | undefined) || undefined,
      ownerEmail: requiredString(values, "email"),
      ownerName: (values.name as string | undefined) || undefined,
    };
    const { result, url } = await withDatabase(
      io.env,
      async ({ config, database }) => {
        const created = await setUpFirstOrganization(database.db, input);
        return { result: created, url: signInLinkUrl(config.baseUrl, created.token) };
      },
      { create: true },
    );
    const { organization, owner } = result;
    const hours = SIGN_IN_LINK_LIFETIME_SECONDS.setup / 3600;
    return {
      json: { organization, owner, sign_in_link: url, expires_in: SIGN_IN_LINK_LIFETIME_SECONDS.setup },
      text: [
        `Created organization ${organization.slug} (${organization.currency}, ${organization.time_zone}) and its owner ${owner.email}`,
        `Open this link within ${hours} hours to choose the owner's password (it works once):`,
        `  ${url}`,
        `Lost or expired: \`donata user link --email ${owner.email}\` prints a new one.`,
      ],
    };
  },
};

export const userLinkCommand: Command = {
  name: "user link",
  usage: "donata user link --email E [--json]",
  summary: "Print a one-time link (1 hour) for a user to choose a new password",
  options: { email: { type: "string" } },
  async run(values, io) {
    const email = requiredString(values, "email");
    const { link, url } = await withDatabase(io.env, async ({ config, database }) => {
      const created = await createResetLink(database.db, email);
      return { link: created, url: signInLinkUrl(config.baseUrl, created.token) };
    });
    return {
      json: {
        user: { id: link.userId, email: link.email },
        sign_in_link: url,
        expires_in: SIGN_IN_LINK_LIFETIME_SECONDS.reset,
      },
      text: [
        `Open this link within an hour to choose a new password for ${link.email} (it works once; earlier links stop working):`,
        `  ${url}`,
      ],
    };
  },
};
