// What a caller gets when Assent cannot be used: an address without the server's key (nothing
// is sent), a server that dies mid-wait, and a server that proves itself and then answers what
// this SDK cannot read. Always one of the SDK's own errors, the reason kept as its `cause`;
// never a bare TypeError, SyntaxError or fetch error, and never taken for an approval.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as assent from "../dist/index.js";
import { serveFor } from "./server.mjs";

/** A program on a port of its own: `answer(req, res)` answers each request; `got` keeps each
 * request's path and authorization, `connections()` counts every connection made to it. */
async function listener(answer) {
  const got = [];
  let connections = 0;
  const srv = createServer((req, res) => {
    got.push([req.url, req.headers.authorization ?? null]);
    answer(req, res);
  });
  srv.on("connection", () => connections++);
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const close = () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); });
  return { url: `http://127.0.0.1:${srv.address().port}`, got, connections: () => connections, close };
}

/** Runs `f` with these environment variables set (`undefined`: unset), then puts them back. */
async function withEnv(vars, f) {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v) => { for (const [k, x] of Object.entries(v)) if (x === undefined) delete process.env[k]; else process.env[k] = x; };
  set(vars);
  try {
    return await f();
  } finally {
    set(before);
  }
}

/** `f()`'s rejection (the test fails if it resolves). */
async function rejection(f) {
  try {
    await f();
  } catch (e) {
    return e;
  }
  assert.fail("it did not fail");
}

/** The codes (else names) along an error's chain of causes. */
function chain(e) {
  const out = [];
  for (let x = e, n = 0; x && n < 10; x = x.cause, n++) out.push(x.code ?? x.name ?? typeof x);
  return out;
}

test("a URL and a token without the server's key say what is missing, and send nothing", async (t) => {
  const fake = await listener((req, res) => res.end("{}"));
  t.after(fake.close);
  const elsewhere = mkdtempSync(join(tmpdir(), "assent-elsewhere-"));
  await withEnv({ ASSENT_HOME: elsewhere, ASSENT_URL: fake.url, ASSENT_TOKEN: "asnt_secret", ASSENT_PROOF_KEY: undefined }, async () => {
    let e = await rejection(() => new assent.Assent().proposeTool("t", {}));
    assert.ok(e instanceof assent.NoProofKey && e instanceof assent.AssentError, `${e?.name}: ${e?.message}`);
    assert.ok(!(e instanceof assent.Impostor));
    assert.ok(e.message.includes(`no server.json in ${elsewhere}`), e.message);
    assert.ok(e.message.includes("ASSENT_HOME") && e.message.includes("ASSENT_PROOF_KEY"), e.message);
    // A home whose server.json is another server's: its key proves nothing about this one.
    writeFileSync(join(elsewhere, "server.json"), JSON.stringify({ url: "http://127.0.0.1:9", proof_key: "ab".repeat(32) }));
    e = await rejection(() => new assent.Assent().proposeTool("t", {}));
    assert.ok(e instanceof assent.NoProofKey, `${e?.name}: ${e?.message}`);
    assert.ok(e.message.includes(`is for http://127.0.0.1:9, not ${fake.url}`), e.message);
    // A key that is not hex is no key.
    e = await withEnv({ ASSENT_PROOF_KEY: "not hex" }, () => rejection(() => new assent.Assent().get("p_1")));
    assert.ok(e instanceof assent.NoProofKey, `${e?.name}: ${e?.message}`);
    assert.ok(e.message.includes("ASSENT_PROOF_KEY has no proof_key in hex"), e.message);
  });
  assert.deepEqual(fake.got, [], "no request, not even the hello, went to an address nothing could prove");
  assert.equal(fake.connections(), 0, "nothing at all was sent to it");

  // A home's server.json that is not an object is no server.json: not running, not a TypeError.
  for (const text of ["null", "42", '{"url": 5}']) {
    const home = mkdtempSync(join(tmpdir(), "assent-odd-"));
    writeFileSync(join(home, "server.json"), text);
    const e = await withEnv({ ASSENT_URL: undefined }, () => rejection(() => new assent.Assent({ home }).proposeTool("t", {})));
    assert.ok(e instanceof assent.AssentNotRunning, `${text}: ${e?.name}: ${e?.message}`);
  }

  // The real server's URL and token, and its key (ASSENT_PROOF_KEY, or its home): it proves
  // itself, and the proposal is filed.
  const s = await serveFor(t);
  const token = readFileSync(join(s.home, "agent.token"), "utf8").trim();
  const key = JSON.parse(readFileSync(join(s.home, "server.json"), "utf8")).proof_key;
  await withEnv({ ASSENT_HOME: elsewhere, ASSENT_URL: `${s.url}/`, ASSENT_TOKEN: token, ASSENT_PROOF_KEY: key }, async () => {
    assert.equal((await new assent.Assent().proposeTool("t", { n: 1 })).status, "pending");
  });
  await withEnv({ ASSENT_HOME: s.home, ASSENT_URL: s.url, ASSENT_TOKEN: token, ASSENT_PROOF_KEY: undefined }, async () => {
    assert.equal((await new assent.Assent().proposeTool("t", { n: 2 })).status, "pending");
  });
});

test("the server dying mid-wait is AssentNotRunning, its cause kept", async (t) => {
  const s = await serveFor(t);
  const a = new assent.Assent({ home: s.home });
  const p = await a.proposeTool("t", {});
  const started = Date.now();
  setTimeout(() => s.stop(), 500);
  const e = await rejection(() => a.wait(p.id, { timeout: 30 }));
  assert.ok(e instanceof assent.AssentNotRunning, `${e?.name}: ${e?.message}`);
  assert.ok(Date.now() - started < 10_000, "the wait ended when the server did");
  assert.ok(e.cause instanceof Error, "the fetch error is kept as the cause");
  // And after: the stopped server took its server.json with it.
  const again = await rejection(() => a.get(p.id));
  assert.ok(again instanceof assent.AssentNotRunning, `${again?.name}: ${again?.message}`);
});

test("an answer the SDK cannot read is an AssentError with the reason as its cause", async (t) => {
  // A server that proves itself (the HMAC of the challenge under server.json's proof_key), then
  // answers with what `next` gives: [status, headers, body], a body of null dropping the
  // connection instead.
  const key = Buffer.from([...Array(32).keys()]);
  let next = () => [200, {}, "{}"];
  const fake = await listener((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/v1/hello") {
      const proof = createHmac("sha256", key).update(`assent-server-proof\n${url.searchParams.get("challenge")}`).digest("hex");
      return res.end(JSON.stringify({ server: "assent", proof }));
    }
    const [status, headers, body] = next(req);
    if (body === null) return req.socket.destroy();
    res.writeHead(status, { "content-length": String(Buffer.byteLength(body)), ...headers });
    res.end(body);
  });
  t.after(fake.close);
  const home = mkdtempSync(join(tmpdir(), "assent-unreadable-"));
  writeFileSync(join(home, "server.json"), JSON.stringify({ url: fake.url, proof_key: key.toString("hex") }));
  writeFileSync(join(home, "agent.token"), "asnt_secret");
  const a = new assent.Assent({ home });
  const calls = [
    ["get", () => a.get("p_1")],
    ["wait", () => a.wait("p_1", { timeout: 1 })],
    ["proposeTool", () => a.proposeTool("t", {})],
    ["withdraw", () => a.withdraw("p_1")],
    ["session", () => a.session("s")],
    ["proposeBatch", () => a.proposeBatch([])],
    ["keys", () => a.keys()],
  ];
  const answers = {
    // Another version's shape: an id and nothing else, or a settled proposal of an unknown
    // status (which must not be read as any outcome).
    shape: [200, {}, '{"id": "p_1"}'],
    status: [200, {}, JSON.stringify({ id: "p_1", kind: "tool.call", status: "approved_later", settled: true, payload: {} })],
    json: [200, {}, "<html>"],
    gzip: [200, { "content-encoding": "gzip" }, "not gzip"],
  };
  const causes = {};
  for (const [what, answer] of Object.entries(answers)) {
    next = () => answer;
    for (const [name, call] of calls) {
      const e = await rejection(call);
      assert.equal(e?.constructor, assent.AssentError, `${what}, ${name}: ${e?.name}: ${e?.message}`);
      assert.match(e.message, /is not one this SDK can read/, `${what}, ${name}`);
      (causes[what] ??= new Set()).add(chain(e.cause).join(" <- "));
    }
  }
  assert.deepEqual(Object.fromEntries(Object.entries(causes).map(([k, v]) => [k, [...v]])), {
    shape: ["TypeError"],
    status: ["TypeError"],
    json: ["SyntaxError"],
    gzip: ["TypeError <- Z_DATA_ERROR"],
  });

  // A good answer still reads; an error whose body is not JSON is still a typed refusal.
  const proposal = { id: "p_1", kind: "tool.call", agent: "a", status: "approved", settled: true, payload: { tool: "t", input: { n: 1 } } };
  next = () => [200, {}, JSON.stringify(proposal)];
  assert.deepEqual(assent.outcome(await a.get("p_1")), { n: 1 });
  next = () => [502, {}, "<html>bad gateway</html>"];
  const refused = await rejection(() => a.get("p_1"));
  assert.ok(refused instanceof assent.Refused && refused.code === "http_502" && refused.status === 502, `${refused?.name}: ${refused?.message}`);

  // A body of the caller's that is not JSON is their TypeError, nothing sent: not "not running".
  const before = fake.got.length;
  const bigint = await rejection(() => a.proposeTool("t", { n: 1n }));
  assert.ok(bigint instanceof TypeError && !(bigint instanceof assent.AssentError), `${bigint?.name}: ${bigint?.message}`);
  assert.equal(fake.got.length, before);

  // A connection dropped before any answer: not running, the cause kept.
  next = () => [200, {}, null];
  const dropped = await rejection(() => a.get("p_1"));
  assert.ok(dropped instanceof assent.AssentNotRunning && dropped.cause instanceof Error, `${dropped?.name}: ${dropped?.message}`);

  // An event that is not JSON, or not an object.
  for (const data of ["{not json", "42"]) {
    next = () => [200, { "content-type": "text/event-stream" }, `data: ${data}\n\n`];
    const e = await rejection(async () => {
      for await (const _ of new assent.Assent({ home }).events());
    });
    assert.equal(e?.constructor, assent.AssentError, `${data}: ${e?.name}: ${e?.message}`);
    assert.match(e.message, /an event from Assent is not a JSON object/);
    assert.ok(data === "42" ? e.cause instanceof TypeError : e.cause instanceof SyntaxError, `${data}: ${e.cause}`);
  }
  assert.ok(fake.got.every(([path, auth]) => (path.startsWith("/v1/hello") ? auth === null : auth === "Bearer asnt_secret")));
});
