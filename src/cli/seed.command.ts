import cliProgress from "cli-progress";
import { loadDocumentLinks } from "../modules/documents/document-links.js";
import { seedOrganization } from "../seed/seed.service.js";
import { type Command, optionalInteger, requiredString } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const seedCommand: Command = {
  name: "seed",
  usage: "donata seed --org S [--campaigns N] [--supporters N] [--checkouts N] [--random-seed N] [--json]",
  summary: "Fill an organization with realistic, deterministic demo data",
  options: {
    org: { type: "string" },
    campaigns: { type: "string" },
    supporters: { type: "string" },
    checkouts: { type: "string" },
    "random-seed": { type: "string" },
  },
  async run(values, io) {
    const organization = requiredString(values, "org");
    const options = {
      organization,
      campaigns: optionalInteger(values, "campaigns", 10),
      supporters: optionalInteger(values, "supporters", 1000),
      checkouts: optionalInteger(values, "checkouts", 5000),
      randomSeed: optionalInteger(values, "random-seed", 1),
    };
    const bar = io.stderr.isTTY
      ? new cliProgress.SingleBar(
          { stream: io.stderr as NodeJS.WriteStream, format: "seeding [{bar}] {percentage}% | {value}/{total} rows" },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
    let started = false;
    const counts = await withDatabase(io.env, async ({ config, database }) => {
      try {
        return await seedOrganization(database, {
          ...options,
          links: await loadDocumentLinks(database.db, config.baseUrl),
          onProgress: (done, total) => {
            if (!bar) return;
            if (!started) bar.start(total, 0);
            started = true;
            bar.update(done);
          },
        });
      } finally {
        bar?.stop();
      }
    });
    return {
      json: counts,
      text: [
        `Seeded ${counts.organization}: ${counts.campaigns} campaigns, ${counts.supporters} supporters, ` +
          `${counts.checkouts} checkouts, ${counts.donations} donations, ${counts.payments} payments`,
      ],
    };
  },
};
