#!/usr/bin/env node
// Runs the TypeScript sources directly: one code path for development, tests and production.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/main.ts");
process.exitCode = await runCli(process.argv.slice(2));
