// verifyReceipt on receipts signed here with a key of the test's own (its JWK Set given as
// Assent's keys): the edge values and malformed input all end in ReceiptInvalid, never another
// error, and only an approval verifies unless another outcome is asked for.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { CompactSign, exportJWK, generateKeyPair } from "jose";
import * as assent from "../dist/index.js";

const { privateKey, publicKey } = await generateKeyPair("Ed25519");
const KEYS = { keys: [{ ...(await exportJWK(publicKey)), kid: "test-key" }] };

async function sign(claims, typ = "assent-receipt+jwt", key = privateKey) {
  const body = typeof claims === "string" ? claims : JSON.stringify(claims);
  return new CompactSign(new TextEncoder().encode(body)).setProtectedHeader({ alg: "EdDSA", typ, kid: "test-key" }).sign(key);
}

function claims(over = {}) {
  const now = Math.floor(Date.now() / 1000);
  return { iss: "assent", sub: "agent", jti: "p1", iat: now, exp: now + 600, outcome: "approve", kind: "tool.call",
    tool: "delete_post", input_sha256: assent.sha256Jcs({ post_id: 7 }), payload_sha256: "00".repeat(32),
    proposed_sha256: "00".repeat(32), decided_by: "person", channel: "app", ...over };
}

async function codeOf(token, keys, expect = {}) {
  try {
    await assent.verifyReceipt(token, keys, expect);
  } catch (e) {
    assert.ok(e instanceof assent.ReceiptInvalid, `${e?.name}: ${e?.message}`);
    return e.code;
  }
  assert.fail("it verified");
}

test("a good receipt verifies", async () => {
  const c = await assent.verifyReceipt(await sign(claims()), KEYS, { tool: "delete_post", input: { post_id: 7 } });
  assert.equal(c.jti, "p1");
});

test("integers past 2^53 cannot be checked, even on a genuine receipt", async () => {
  // The hash Assent took over {"post_id": 2^60 + 1}, as the JSON text it was sent as.
  const hash = createHash("sha256").update('{"post_id":1152921504606846977}').digest("hex");
  const token = await sign(claims({ input_sha256: hash, payload_sha256: hash }));
  assert.equal(await codeOf(token, KEYS, { tool: "delete_post", input: { post_id: 2 ** 60 + 1 } }), "unsafe_integer");
  assert.equal(await codeOf(token, KEYS, { payload: { post_id: 2 ** 60 } }), "unsafe_integer");
  assert.equal(await codeOf(token, KEYS, { tool: "delete_post", input: { post_id: 1152921504606846977n } }), "unsafe_integer");
  assert.equal(await codeOf(token, KEYS, { tool: "delete_post", input: { ids: [1, -(2 ** 53)] } }), "unsafe_integer");
  for (const edge of [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
    const atEdge = await sign(claims({ input_sha256: assent.sha256Jcs({ post_id: edge }) }));
    assert.equal((await assent.verifyReceipt(atEdge, KEYS, { tool: "delete_post", input: { post_id: edge } })).jti, "p1");
  }
});

test("only an approval verifies unless another outcome is asked for", async () => {
  const rejected = await sign(claims({ outcome: "reject" }));
  assert.equal(await codeOf(rejected, KEYS), "not_approved");
  assert.equal(await codeOf(rejected, KEYS, { tool: "delete_post", input: { post_id: 7 } }), "not_approved");
  assert.equal((await assent.verifyReceipt(rejected, KEYS, { outcome: "reject" })).outcome, "reject");
  assert.equal(await codeOf(rejected, KEYS, { outcome: "refine" }), "wrong_outcome");
  assert.equal(await codeOf(await sign(claims()), KEYS, { outcome: "reject" }), "wrong_outcome");
});

test("malformed tokens, keys and claims are ReceiptInvalid", async () => {
  for (const token of [undefined, null, 42, {}, "", "not a receipt", "a.b.c", "a.b.c.d"]) {
    assert.ok(["malformed", "bad_signature"].includes(await codeOf(token, KEYS)), String(token));
  }
  const good = await sign(claims());
  for (const keys of [undefined, null, [], "keys", { keys: "no" }, { keys: [{ kty: "OKP" }] }, { nope: 1 }]) {
    assert.ok(["malformed", "bad_signature"].includes(await codeOf(good, keys)), JSON.stringify(keys));
  }
  for (const body of ["[1,2]", '"a string"', "not json", claims({ exp: null }), claims({ exp: "tomorrow" }),
    claims({ iat: true }), claims({ iat: 1.5 }), claims({ outcome: null }), claims({ kind: 3 }),
    claims({ payload_sha256: undefined }), claims({ tool: ["delete_post"] }), claims({ aud: 5 })]) {
    assert.equal(await codeOf(await sign(body), KEYS), "malformed", JSON.stringify(body));
  }
});

test("values that are not JSON cannot be checked", async () => {
  const token = await sign(claims());
  const cycle = {};
  cycle.self = cycle;
  for (const bad of [{ x: NaN }, { x: Infinity }, { x: 1n }, { x: "\ud800" }, cycle, undefined]) {
    assert.equal(await codeOf(token, KEYS, { tool: "delete_post", input: bad }), "malformed");
  }
  assert.equal(await codeOf(token, KEYS, { payload: { x: NaN } }), "malformed");
  assert.equal(await codeOf(token, KEYS, { now: "now" }), "malformed");
});

test("the other refusals keep their codes", async () => {
  const now = Math.floor(Date.now() / 1000);
  assert.equal(await codeOf(await sign(claims(), "JWT"), KEYS), "algorithm");
  assert.equal(await codeOf(await sign(claims({ exp: now - 120 })), KEYS), "expired");
  assert.equal(await codeOf(await sign(claims({ iat: now + 600 })), KEYS), "not_yet_valid");
  assert.equal(await codeOf(await sign(claims()), KEYS, { tool: "delete_post", input: { post_id: 8 } }), "payload_mismatch");
  assert.equal(await codeOf(await sign(claims()), KEYS, { audience: "blog" }), "wrong_audience");
  const other = await generateKeyPair("Ed25519");
  assert.equal(await codeOf(await sign(claims(), undefined, other.privateKey), KEYS), "bad_signature");
});

test("input given alone is checked", async () => {
  // A receipt for {"id": 9007199254740991} does not verify against {"id": 1} when no tool is named.
  const token = await sign(claims({ input_sha256: assent.sha256Jcs({ id: 9007199254740991 }) }));
  assert.equal(await codeOf(token, KEYS, { input: { id: 1 } }), "payload_mismatch");
  assert.equal((await assent.verifyReceipt(token, KEYS, { input: { id: 9007199254740991 } })).jti, "p1");
  assert.equal(await codeOf(await sign(claims({ kind: "file.write", tool: null })), KEYS, { input: { id: 1 } }), "wrong_tool");
});
