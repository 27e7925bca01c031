// `npm run prepare`: generates src/schema.ts from docs/openapi.json (openapi-typescript) and
// builds dist/ (tsc), neither of which git keeps. npm runs it after `npm ci` or `npm install` in
// this folder, on `npm pack`, and when a project installs the SDK from its folder
// (`npm install [--install-links] PATH/sdk/typescript`: in this folder, before linking or
// packing it). In a fresh clone nothing is installed here yet, so it first installs this
// folder's pinned dependencies (package-lock.json: the generator, the build's TypeScript, and
// the runtime dependencies a linked install resolves from here).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const needed = ["openapi-typescript/bin/cli.js", "typescript/bin/tsc", "@types/node/package.json", "openapi-fetch/package.json", "jose/package.json", "canonicalize/package.json"];

if (needed.some((p) => !existsSync(join(root, "node_modules", p)))) {
  // The installing npm's settings for the user's project (its folder, --global, --omit=dev,
  // --install-links, ...) reach scripts as npm_config_*: keep only where and how to download.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^npm_/i.test(k) || /^npm_config_(.*registry.*|.*_auth.*|.*token.*|.*proxy.*|strict_ssl|cafile|ca|cert|key|cache|userconfig|globalconfig|fetch_.*)$/i.test(k)));
  const [cmd, args] = process.env.npm_execpath?.endsWith(".js")
    ? [process.execPath, [process.env.npm_execpath]]
    : ["npm", []];
  // --ignore-scripts: no dependency has install scripts, and this script runs next anyway.
  execFileSync(cmd, [...args, "ci", "--include=dev", "--ignore-scripts", "--no-audit", "--no-fund"],
    { cwd: root, env, stdio: ["ignore", "inherit", "inherit"], shell: cmd === "npm" && process.platform === "win32" });
}
// What `npm run build` does: `npm run generate`, then tsc.
execFileSync(process.execPath, [join(root, "node_modules/openapi-typescript/bin/cli.js"), join(root, "../../docs/openapi.json"), "-o", join(root, "src/schema.ts")],
  { cwd: root, stdio: "inherit" });
execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json")],
  { cwd: root, stdio: "inherit" });
