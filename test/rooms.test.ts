import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

/** The imports of every TypeScript file under `directory` (relative to the repository), as written. */
function importsOf(directory: string): { file: string; from: string }[] {
  return readdirSync(path.join(ROOT, directory), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts"))
    .flatMap((entry) => {
      const file = path.relative(ROOT, path.join(entry.parentPath, entry.name));
      const source = readFileSync(path.join(ROOT, file), "utf8");
      return [...source.matchAll(/^\s*(?:import|export)[^;]*?from\s+"([^"]+)"/gm)].map((match) => ({
        file,
        from: match[1] as string,
      }));
    });
}

/** Where an import leads: a package name, or a path under src/. */
function target(file: string, from: string): string {
  return from.startsWith(".") ? path.relative(ROOT, path.resolve(ROOT, path.dirname(file), from)) : from;
}

/**
 * The rooms of docs/architecture.md, checked on the sources: the identity room imports no HTTP
 * (fastify, src/http/) and no module; the shared rooms never import a module.
 */
describe("the rooms", () => {
  it("keeps HTTP and the modules out of the identity room", () => {
    const wrong = importsOf("src/identity")
      .map(({ file, from }) => ({ file, to: target(file, from) }))
      .filter(
        ({ to }) => to === "fastify" || to.startsWith("@fastify/") || /^src\/(http|modules|admin|oauth)\//.test(to),
      );
    expect(wrong).toEqual([]);
  });

  it("keeps the modules out of the shared rooms", () => {
    const shared = [
      "src/identity",
      "src/errors",
      "src/db",
      "src/auth",
      "src/events",
      "src/limits",
      "src/i18n",
      "src/secrets",
    ];
    const wrong = shared
      .flatMap((room) => importsOf(room))
      .map(({ file, from }) => ({ file, to: target(file, from) }))
      .filter(({ to }) => to.startsWith("src/modules/"))
      // The one composition point, in docs/architecture.md: the events' subscribers are listed where events are written.
      .filter(
        ({ file, to }) =>
          !(file === "src/events/subscribers.ts" && to === "src/modules/receipts/receipt-subscriber.js"),
      );
    expect(wrong).toEqual([]);
  });
});
