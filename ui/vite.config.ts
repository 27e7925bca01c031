import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The app loads its front end from disk through Tauri: no dev server URL is ever baked in,
// and nothing is fetched from the network at run time.
// `--mode remote` builds the review page the remote listener serves to phones (remote.html,
// into dist-remote): the same components, with the remote backend instead of Tauri's.
export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  base: mode === "remote" ? "/" : "./",
  publicDir: mode === "remote" ? "public-remote" : "public",
  clearScreen: false,
  build:
    mode === "remote"
      ? { target: "es2020", outDir: "dist-remote", emptyOutDir: true, sourcemap: false, rollupOptions: { input: "remote.html" } }
      : { target: "es2022", outDir: "dist", emptyOutDir: true, sourcemap: false },
  test: { environment: "jsdom", include: ["src/**/*.test.ts"], setupFiles: ["src/test-setup.ts"] },
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
}));
