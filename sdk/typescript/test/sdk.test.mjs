// The TypeScript SDK against the real server (`assent serve` on a temporary home, the binary in
// ASSENT_BIN), the person deciding through the owner API.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as assent from "../dist/index.js";
import { serve, serveFor } from "./server.mjs";

const here = dirname(fileURLToPath(import.meta.url));

test("propose, wait and the person's edit", async (t) => {
  const s = await serveFor(t);
  const a = new assent.Assent({ home: s.home });
  const p = await a.proposeTool("deploy", { env: "prod" }, { title: "Deploy", audience: "deployer" });
  assert.equal(p.status, "pending");
  assert.equal(p.audience, "deployer");
  const decided = s.decideNext({ outcome: "approve", edits: { input: { env: "staging" } } });
  const done = await a.wait(p.id, { timeout: 20, poll: 1 });
  await decided;
  assert.deepEqual(assent.outcome(done), { env: "staging" });
  assert.equal(done.decision.receipt.split(".").length, 3);
});

test("a wait's last second is one request, not hundreds", async (t) => {
  // wait({timeout: 2.9}): a two-second long-poll, the last 0.9 s slept, then one look (it sent
  // hundreds of requests in its last second when the server's whole-second wait was 0).
  const s = await serveFor(t);
  // Counted from before the client is made (openapi-fetch takes the fetch it finds then).
  const real = globalThis.fetch;
  const waits = [];
  globalThis.fetch = (input, init) => {
    const url = typeof input === "string" ? input : input.url;
    if (url.includes("wait=")) waits.push(url);
    return real(input, init);
  };
  try {
    const a = new assent.Assent({ home: s.home });
    const p = await a.proposeTool("t", { n: 4 });
    const began = Date.now();
    const last = await a.wait(p.id, { timeout: 2.9 });
    const took = Date.now() - began;
    assert.equal(last.status, "pending");
    assert.ok(waits.length >= 1 && waits.length <= 3, `${waits.length}: ${waits.join("\n")}`);
    assert.ok(took >= 2800 && took < 4000, `${took} ms`);
  } finally {
    globalThis.fetch = real;
  }
});

test("gated runs with what was approved, and not otherwise", async (t) => {
  const s = await serveFor(t);
  const client = new assent.Assent({ home: s.home });
  const calls = [];
  const deletePost = assent.gated(async function delete_post(args) { calls.push(args); return `deleted ${args.post_id}`; },
    { client, preview: (a) => `Delete post ${a.post_id}`, audience: "blog", receipt: true });
  s.decideNext({ outcome: "approve", edits: { input: { post_id: 8 } } });
  assert.equal(await deletePost({ post_id: 7 }), "deleted 8");
  s.decideNext({ outcome: "reject", reason: "keep it" });
  await assert.rejects(deletePost({ post_id: 9 }), (e) => e instanceof assent.Rejected && e.reason === "keep it");
  s.decideNext({ outcome: "refine", feedback: "archive instead" });
  await assert.rejects(deletePost({ post_id: 9 }), (e) => e instanceof assent.Refined && e.feedback === "archive instead");
  // Past its timeout the call withdraws its proposal, and says so: Withdrawn, as the proposal
  // is in Assent (Expired is Assent's own expiry, `expires_in`).
  const slow = assent.gated(function slow(args) { calls.push(args); }, { client, timeout: 1 });
  await assert.rejects(slow({ x: 1 }), (e) => e instanceof assent.Withdrawn && !(e instanceof assent.Expired));
  assert.deepEqual(calls, [{ post_id: 8 }]);
  const gone = await s.call("GET", "/proposals?status=withdrawn");
  assert.deepEqual(gone.items.map((p) => p.payload.tool), ["slow"], "the timed-out proposal was withdrawn");
  const direct = assent.gated(function read(args) { return args.x + 1; }, { requiresApproval: false });
  assert.equal(await direct({ x: 1 }), 2);
});

test("gated's function receives exactly the approved object", async (t) => {
  const s = await serveFor(t);
  const client = new assent.Assent({ home: s.home });
  const got = [];
  const remove = assent.gated(function remove(args) { got.push(args); }, { client, receipt: true });
  const proposed = { path: "build", recursive: true };
  for (const edited of [
    { path: "build", recursive: false }, // changes one
    { path: "build", recursive: true, dry_run: true }, // adds one
    { path: "dist", recursive: true }, // changes one
  ]) {
    const decided = s.decideNext({ outcome: "approve", edits: { input: edited } });
    await remove({ ...proposed });
    await decided;
    assert.deepEqual(got.at(-1), edited, "exactly the person's input, nothing of the proposed one merged back");
  }
  // Deleting an argument would run the function's own default for it, which nobody approved.
  for (const edited of ["rm build", null, ["build"], { path: "build" }]) {
    const decided = s.decideNext({ outcome: "approve", edits: { input: edited } });
    await assert.rejects(remove({ ...proposed }), (e) => e instanceof assent.Failed && e.code === "arguments_unfit");
    await decided;
  }
  assert.equal(got.length, 3, "an input that is not arguments by name, or that leaves one out, never runs");
  // Declared defaults are shown with the caller's arguments, and an edit keeping them runs.
  const clean = assent.gated(function clean({ path, recursive = true }) { got.push({ path, recursive }); }, { client, defaults: { recursive: true } });
  const decided = s.decideNext({ outcome: "approve", edits: { input: { path: "build", recursive: false } } });
  await clean({ path: "build" });
  await decided;
  const shown = (await s.call("GET", "/proposals?status=approved")).items.find((p) => p.payload.tool === "clean");
  assert.deepEqual(shown.payload.input, { recursive: true, path: "build" }, "the default was shown");
  assert.deepEqual(got.at(-1), { path: "build", recursive: false });
});

test("a write the function builds is carried out by Assent", async (t) => {
  const s = await serveFor(t);
  const client = new assent.Assent({ home: s.home });
  const dir = mkdtempSync(join(tmpdir(), "assent-write-"));
  const target = join(dir, "notes.txt");
  writeFileSync(target, "old\n");
  const save = assent.gated(function save_notes({ text }) { return { path: target, content: text }; },
    { client, kind: "file.write", preview: () => "Update the notes" });
  s.decideNext({ outcome: "approve", edits: { content: "edited by the person\n" } });
  await save({ text: "new\n" });
  assert.equal(readFileSync(target, "utf8"), "edited by the person\n");
  s.decideNext({ outcome: "reject", reason: "leave them" });
  await assert.rejects(save({ text: "other\n" }), (e) => e instanceof assent.Rejected);
  assert.equal(readFileSync(target, "utf8"), "edited by the person\n");
});

test("aborting a wait withdraws; bad input is a typed refusal", async (t) => {
  const s = await serveFor(t);
  const a = new assent.Assent({ home: s.home });
  const p = await a.proposeTool("t", {});
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new Error("gave up")), 500);
  await assert.rejects(a.wait(p.id, { signal: ctl.signal }), /gave up/);
  assert.equal((await a.get(p.id)).status, "withdrawn");
  await assert.rejects(a.propose("no.such.kind", {}), (e) => e instanceof assent.Refused && e.code === "unknown_kind");
  const bad = new assent.Assent({ home: s.home, token: "asnt_wrong" });
  await assert.rejects(bad.proposeTool("t", {}), (e) => e instanceof assent.Unauthorized);
});

test("a batch in one group, and a session's counts", async (t) => {
  const s = await serveFor(t);
  const a = new assent.Assent({ home: s.home });
  const item = (c) => ({ kind: "tool.call", payload: { tool: "Bash", input: { command: c } }, session_id: "t-1" });
  const b = await a.proposeBatch([item("make a"), { kind: "nope", payload: {} }, item("make b")], { groupId: "rel-1", idempotencyKey: "k-1" });
  assert.deepEqual([b.group_id, b.filed, b.refused], ["rel-1", 2, 1]);
  assert.equal(b.items[1].error.code, "unknown_kind");
  const again = await a.proposeBatch([item("make a")], { groupId: "rel-1", idempotencyKey: "k-1" });
  assert.equal(again.items[0].proposal.id, b.items[0].proposal.id, "a retry files nothing twice");
  await s.call("POST", `/proposals/${b.items[0].proposal.id}/decision`, { outcome: "approve" });
  const c = await a.session("t-1");
  assert.deepEqual([c.pending, c.total, c.by_status], [1, 2, { pending: 1, approved: 1 }]);
});

test("a receipt is checked for exactly this call", async (t) => {
  const s = await serveFor(t);
  const a = new assent.Assent({ home: s.home });
  const p = await a.proposeTool("publish", { post_id: 3 }, { audience: "blog" });
  await s.decideNext({ outcome: "approve" });
  const token = (await a.get(p.id)).decision.receipt;
  const keys = await a.keys();
  const c = await assent.verifyReceipt(token, keys, { tool: "publish", input: { post_id: 3 }, audience: "blog" });
  assert.equal(c.jti, p.id);
  for (const [e, code] of [
    [{ tool: "publish", input: { post_id: 4 } }, "payload_mismatch"],
    [{ tool: "unpublish", input: { post_id: 3 } }, "wrong_tool"],
    [{ audience: "mail" }, "wrong_audience"],
    [{ now: c.exp + 61 }, "expired"],
  ]) {
    await assert.rejects(assent.verifyReceipt(token, keys, e), (err) => err instanceof assent.ReceiptInvalid && err.code === code);
  }
  const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
  await assert.rejects(assent.verifyReceipt(forged, keys), (err) => err.code === "bad_signature");
});

test("not running, and an impostor never gets the token", async () => {
  const empty = mkdtempSync(join(tmpdir(), "assent-none-"));
  await assert.rejects(new assent.Assent({ home: empty }).proposeTool("t", {}), (e) => e instanceof assent.AssentNotRunning);
  const seen = [];
  const srv = createServer((req, res) => { seen.push(req.headers.authorization ?? null); res.end(JSON.stringify({ proof: "00".repeat(32) })); });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const home = mkdtempSync(join(tmpdir(), "assent-imp-"));
  writeFileSync(join(home, "server.json"), JSON.stringify({ url: `http://127.0.0.1:${srv.address().port}`, proof_key: "ab".repeat(32) }));
  writeFileSync(join(home, "agent.token"), "asnt_secret");
  await assert.rejects(new assent.Assent({ home }).proposeTool("t", {}), (e) => e instanceof assent.Impostor);
  srv.close();
  assert.deepEqual(seen, [null], "only the unauthenticated hello reached it");
});

test("events: a server that stops mid-stream, or is gone, is AssentNotRunning", async () => {
  const s = await serve();
  const a = new assent.Assent({ home: s.home });
  const stream = a.events();
  const first = stream.next();
  // The stream is asked for when `next` is first called, and may be open only after the first
  // proposal is filed (a loaded machine): file one until the stream has told of one.
  let told = null;
  for (let n = 1; n <= 50 && !told; n++) {
    await a.proposeTool("t", { n });
    told = await Promise.race([first, new Promise((r) => setTimeout(() => r(null), 200))]);
  }
  assert.equal(told?.value.type, "proposal.created");
  s.stop();
  await assert.rejects(
    (async () => {
      for await (const _ of stream);
    })(),
    (e) => e instanceof assent.AssentNotRunning,
  );
  await assert.rejects(a.events().next(), (e) => e instanceof assent.AssentNotRunning);
});

// src/schema.ts and dist/ are made here (`npm run build`, or prepare), not kept by git: the tests
// above are of the current docs/openapi.json and sources only if neither is older than them.
test("the generated schema and the built files are what the sources make", () => {
  const root = join(here, "..");
  const out = mkdtempSync(join(tmpdir(), "assent-gen-"));
  execFileSync(join(root, "node_modules/.bin/openapi-typescript"), [join(root, "../../docs/openapi.json"), "-o", join(out, "schema.ts")], { stdio: "ignore" });
  assert.equal(readFileSync(join(out, "schema.ts"), "utf8"), readFileSync(join(root, "src/schema.ts"), "utf8"),
    "docs/openapi.json changed since src/schema.ts was generated: run `npm run build` in sdk/typescript");
  mkdirSync(join(out, "dist"));
  execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", join(root, "tsconfig.json"), "--outDir", join(out, "dist")], { stdio: "ignore" });
  for (const f of ["index.js", "client.js", "gated.js", "receipts.js", "discover.js", "errors.js", "answers.js", "client.d.ts", "adapters/ai-sdk.js", "adapters/openai-agents.js", "adapters/common.js"]) {
    assert.equal(readFileSync(join(out, "dist", f), "utf8"), readFileSync(join(root, "dist", f), "utf8"), `dist/${f} is stale: run npm run build`);
  }
});
