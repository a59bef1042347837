import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  // One graphql module for our code and the libraries (Vite would otherwise pick its .mjs build).
  resolve: { alias: { graphql: require.resolve("graphql") } },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    // Guards against a hang, not measures: CI runs the suite three times side by side on 2 cores.
    testTimeout: 120_000,
    hookTimeout: 240_000,
    pool: "forks",
    // One process runs the files one after another with its modules loaded once: about 40 % less CPU
    // than a fresh process per file, which CI's three runs on 2 cores need. Files share no state:
    // each opens its own database and server, and nothing in the suite mocks a module.
    isolate: false,
  },
});
