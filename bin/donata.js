#!/usr/bin/env node
// Runs the TypeScript sources directly: one code path for development, tests and production.
import cluster from "node:cluster";
import { register } from "tsx/esm/api";

// The Node.js lines of package.json's "engines" (Node 22 and 24 LTS, tested in CI; 26 and later);
// npm warns about others at install. A person at a terminal hears it again here, scripts are left alone.
const [major, minor] = process.versions.node.split(".").map(Number);
const supported = (major === 22 && minor >= 22) || (major === 24 && minor >= 15) || major >= 26;
if (!supported && process.stderr.isTTY) {
  process.stderr.write(
    `donata: Node.js ${process.versions.node} is not supported; use Node.js 22.22+, 24.15+ or 26+ (see README, "Quick start")\n`,
  );
}

register();
const { runCli } = await import("../src/cli/main.ts");
process.exitCode = await runCli(process.argv.slice(2));
// A child of `serve --processes` is held open by its channel to the primary: let go of it to exit.
if (cluster.isWorker) cluster.worker?.disconnect();
