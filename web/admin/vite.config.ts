import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));
// `npm run dev:admin` proxies the API to a running server (DONATA_URL, default :3000).
const target = process.env.DONATA_URL ?? "http://127.0.0.1:3000";

export default defineConfig({
  root,
  base: "/admin/",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      "/admin/api": target,
      "/admin/graphql": target,
      "/admin/export": target,
      "/donate": target,
    },
  },
});
