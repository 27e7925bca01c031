#!/usr/bin/env bash
# Installs the SDK as a new user does, from a copy of this folder as a fresh clone has it (no
# node_modules, no dist, no src/schema.ts: git keeps none of them; docs/openapi.json beside it,
# which the schema is generated from), into new projects outside the repository, in the three
# ways the README gives: `npm install PATH` (a link), `npm install --install-links PATH` (a
# copy) and the tarball of `npm pack`. Each project imports `assent`, `assent/ai-sdk` and
# `assent/openai-agents` as the README does; the first also installs the frameworks as the
# README says and type-checks a user's TypeScript file against the SDK's types.
# Needs node, npm and the npm registry (or npm's cache). Prints "fresh install: ok" at the end.
set -euo pipefail
sdk="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/fresh-ts-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

repo="$tmp/assent/sdk/typescript"
mkdir -p "$repo" "$tmp/assent/docs"
tar -C "$sdk" --exclude=./node_modules --exclude=./dist --exclude=./src/schema.ts --exclude='./*.tgz' -cf - . | tar -C "$repo" -xf -
cp "$sdk/../../docs/openapi.json" "$tmp/assent/docs/"

expect() { # output, then the names each of the three entry points must export
  grep -qx "assent: .*\bgated\b.*" <<<"$1" && grep -q "\bverifyReceipt\b" <<<"$1" && grep -q "\bAssent\b" <<<"$1" \
    && grep -qx "assent/ai-sdk: assentToolApproval" <<<"$1" \
    && grep -qx "assent/openai-agents: runWithAssent" <<<"$1" \
    || { echo "unexpected exports:"; echo "$1"; exit 1; }
}
imports='import * as core from "assent";
import * as aiSdk from "assent/ai-sdk";
import * as agents from "assent/openai-agents";
console.log("assent:", Object.keys(core).sort().join(" "));
console.log("assent/ai-sdk:", Object.keys(aiSdk).join(" "));
console.log("assent/openai-agents:", Object.keys(agents).join(" "));'

project() { mkdir -p "$tmp/$1" && cd "$tmp/$1" && npm init -y >/dev/null; }

# 1. The README's command: a link to the folder; `prepare` installs the folder's dependencies
#    (where node resolves the SDK's own imports from), generates src/schema.ts and builds dist/.
project linked
npm install "$repo" 2>&1 | grep -v '^npm warn' || true
[ -L node_modules/assent ] || { echo "npm install PATH did not link the folder"; exit 1; }
npm install ai@7 @openai/agents@0.20 zod@4 2>&1 | grep -v '^npm warn' || true
printf '%s\n%s\n' "$imports" 'import { generateText } from "ai"; import { Agent } from "@openai/agents";
console.log("frameworks:", typeof generateText, typeof Agent);' >check.mjs
out="$(node check.mjs)"; echo "$out"; expect "$out"
grep -qx "frameworks: function function" <<<"$out"
cat >app.ts <<'EOF'
import { gated, Rejected, Assent, verifyReceipt } from "assent";
import { assentToolApproval } from "assent/ai-sdk";
import { runWithAssent } from "assent/openai-agents";
import { Agent } from "@openai/agents";
import type { generateText } from "ai";

const deletePost = gated(async function delete_post({ post_id }: { post_id: number }) { return post_id; },
  { preview: ({ post_id }) => `Delete post ${post_id}` });
export const calls: [Promise<number>, typeof Rejected, Assent, typeof verifyReceipt] =
  [deletePost({ post_id: 7 }), Rejected, new Assent(), verifyReceipt];
export const approval: Parameters<typeof generateText>[0]["toolApproval"] = assentToolApproval({ sessionId: "s" });
export const run = () => runWithAssent(new Agent({ name: "blog" }), "tidy the blog");
EOF
echo '{"compilerOptions":{"module":"nodenext","moduleResolution":"nodenext","target":"es2022","strict":true,"noEmit":true,"skipLibCheck":true,"types":[]},"files":["app.ts"]}' >tsconfig.json
node "$repo/node_modules/typescript/bin/tsc" -p tsconfig.json
echo "typescript: app.ts type-checks"

# 2. A copy in the project (its dependencies installed there), the folder now built.
project copied
npm install --install-links "$repo" 2>&1 | grep -v '^npm warn' || true
[ -d node_modules/assent ] && [ ! -L node_modules/assent ] && [ -d node_modules/openapi-fetch ] \
  || { echo "npm install --install-links PATH did not copy the SDK with its dependencies"; exit 1; }
echo "$imports" >check.mjs
out="$(node check.mjs)"; expect "$out"

# 3. The tarball (`npm pack` runs prepare: dist/ is built again).
rm -rf "$repo/dist"
(cd "$repo" && npm pack 2>&1 | grep -v '^npm warn' | tail -1)
project packed
npm install "$repo"/assent-*.tgz 2>&1 | grep -v '^npm warn' || true
echo "$imports" >check.mjs
out="$(node check.mjs)"; expect "$out"
echo "fresh install: ok"
