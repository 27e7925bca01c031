import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The app loads its front end from disk through Tauri: no dev server URL is ever baked in,
// and nothing is fetched from the network at run time.
export default defineConfig({
  plugins: [svelte()],
  base: "./",
  clearScreen: false,
  build: { target: "es2022", outDir: "dist", emptyOutDir: true, sourcemap: false },
  test: { environment: "jsdom", include: ["src/**/*.test.ts"], setupFiles: ["src/test-setup.ts"] },
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
});
