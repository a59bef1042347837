import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_CATALOG, EVENT_TYPES } from "../src/events/catalog.js";
import { RETRY_SCHEDULE_SECONDS } from "../src/modules/webhooks/webhook-delivery.service.js";
import { ROOT } from "./helpers/cli.js";

/** The documentation stands on its own: what a reader is sent to is in the repository, and says what it is said to. */

// biome-ignore lint/suspicious/noExplicitAny: a JSON catalog read field by field
type Json = Record<string, any>;

function markdownFiles(directory: string): string[] {
  return readdirSync(path.join(ROOT, directory), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(directory, entry.name);
    if (entry.isDirectory())
      return entry.name === "node_modules" || entry.name.startsWith(".") ? [] : markdownFiles(relative);
    return entry.name.endsWith(".md") ? [relative] : [];
  });
}

describe("the documentation", () => {
  it("sends readers to no file outside the repository (the project's private specification and research)", () => {
    const files = ["README.md", ...markdownFiles("docs")];
    const outside = files.flatMap((file) =>
      readFileSync(path.join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((line, index) =>
          /\.\.\/shared\/|\binterface\.md\b|\bdecisions\.md\b|research\/pg-boss/.test(line)
            ? [`${file}:${index + 1}: ${line}`]
            : [],
        ),
    );
    expect(outside).toEqual([]);
  });

  it("carries no note about the project's own planning (which issue decides what) for readers to stumble on", () => {
    const files = ["README.md", ...markdownFiles("docs")];
    const notes = files.flatMap((file) =>
      readFileSync(path.join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((line, index) =>
          /\bissue (decides|will|is to)\b|\bthe [a-z-]+ issue\b|\bTODO\b|\bTBD\b/i.test(line)
            ? [`${file}:${index + 1}: ${line}`]
            : [],
        ),
    );
    expect(notes).toEqual([]);
  });

  it("README's demo walk-through sends the reader to the donor-page link where it is: the receipt email", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const step = /^6\. (.+(?:\n {3}.+)*)/m.exec(readme)?.[1] ?? "";
    expect(step).toContain("The receipt email's **open your donor page** link");
    const catalog = JSON.parse(readFileSync(path.join(ROOT, "src/i18n/catalogs/en/email.json"), "utf8")) as Json;
    expect(catalog.receipt.portal_link).toBe("open your donor page");
  });

  it("webhooks.md gives the retry schedule and the event catalog the code has", () => {
    const doc = readFileSync(path.join(ROOT, "docs/webhooks.md"), "utf8");
    const units: Record<string, number> = { s: 1, min: 60, h: 3600 };
    const row = /^\s*\| next attempt in \|(.+)\|$/m.exec(doc)?.[1] ?? "";
    const waits = row.split("|").map((cell) => {
      const [amount, unit] = cell.trim().split(" ");
      return Number(amount) * (units[unit ?? ""] ?? Number.NaN);
    });
    expect(waits).toEqual([...RETRY_SCHEDULE_SECONDS]);
    const listed = [...doc.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \| `([a-z]+:read)` \|/gm)].map((match) => [
      match[1],
      match[2],
    ]);
    const readable = EVENT_TYPES.flatMap((type) => {
      const permission = EVENT_CATALOG[type].permission;
      return permission === null ? [] : [[type, permission]];
    });
    expect(listed).toEqual(readable);
  });
});
