/** Checking a decision's receipt offline: Assent's Ed25519 signature (a compact JWS, checked by
 * `jose`) with its public keys, and that it is for what is about to run (hashes over RFC 8785
 * JSON, by `canonicalize`). */

import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import { ReceiptInvalid } from "./errors.js";

/** Seconds of clock difference tolerated. */
export const SKEW = 60;

/** A person's answer, as a receipt records it. */
export type Outcome = "approve" | "reject" | "refine";

export interface Claims {
  iss: string;
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  aud?: string;
  outcome: Outcome;
  kind: string;
  tool?: string;
  input_sha256?: string;
  payload_sha256: string;
  proposed_sha256: string;
  decided_by: string;
  channel: string;
}

/** SHA-256 (hex) of the RFC 8785 form of `value`. */
export function sha256Jcs(value: unknown): string {
  return createHash("sha256").update(canonicalize(value) ?? "").digest("hex");
}

/** Whether two JSON values are the same value (compared in their RFC 8785 form: key order and
 * how a number is written do not matter). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalize(a) === canonicalize(b);
}

/** Whether a receipt's `tool` names `name`: the same, or `mcp__SERVER__name`. */
export function namesTool(claimed: string, name: string): boolean {
  if (claimed === name) return true;
  if (!claimed.startsWith("mcp__") || !claimed.endsWith(`__${name}`)) return false;
  const server = claimed.slice(5, claimed.length - name.length - 2);
  return server.length > 0 && !server.includes("__");
}

export interface Expect {
  tool?: string;
  input?: unknown;
  payload?: unknown;
  audience?: string;
  /** The outcome the receipt must record (default `"approve"`: only an approval will do). Name
   * another (`"reject"`, `"refine"`) to accept it instead, explicitly. */
  outcome?: Outcome;
  /** Unix seconds (default now). */
  now?: number;
}

/** Throws ReceiptInvalid unless `value` is JSON whose RFC 8785 form is one unambiguous value:
 * an integer beyond 2^53-1 in magnitude (`unsafe_integer`: JavaScript itself reads 2^60+1 as
 * 2^60, so no hash over it says what was approved), or what is not JSON (`malformed`). Values
 * JSON.stringify leaves out (an `undefined` property) are left out here too. */
function checkHashable(value: unknown, where: string, seen: Set<object>): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new ReceiptInvalid("malformed", `${where} is ${value}, which is not a JSON number`);
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new ReceiptInvalid("unsafe_integer", `${where} is ${value}, beyond 2^53-1: no hash of it is unambiguous`);
    }
  } else if (typeof value === "bigint") {
    const unsafe = value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER);
    throw new ReceiptInvalid(unsafe ? "unsafe_integer" : "malformed", `${where} is the BigInt ${value}, which is not JSON`);
  } else if (typeof value === "object" && value !== null && !seen.has(value)) {
    seen.add(value);
    for (const [k, v] of Object.entries(value)) checkHashable(v, `${where}.${k}`, seen);
  }
}

/** The hash of `value` as a receipt names it, or ReceiptInvalid when it cannot be taken
 * unambiguously (see checkHashable; a cycle or a lone surrogate is `malformed`). */
function checkedHash(value: unknown, what: string): string {
  if (value === undefined) throw new ReceiptInvalid("malformed", `${what}: none given to check the receipt against`);
  checkHashable(value, what, new Set());
  try {
    return sha256Jcs(value);
  } catch (err) {
    throw new ReceiptInvalid("malformed", `${what}: not JSON (${(err as Error).message})`);
  }
}

/** The claims every receipt has, and their types (`aud`, `tool` and `input_sha256` may be
 * absent). */
const REQUIRED = { iat: "integer", exp: "integer", outcome: "string", kind: "string", payload_sha256: "string" } as const;
const OPTIONAL = ["aud", "tool", "input_sha256"] as const;

function claimsOf(payload: Uint8Array): Claims {
  let c: unknown;
  try {
    c = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  } catch {
    throw new ReceiptInvalid("malformed", "its claims are not JSON");
  }
  if (typeof c !== "object" || c === null || Array.isArray(c)) throw new ReceiptInvalid("malformed", "its claims are not a JSON object");
  const r = c as Record<string, unknown>;
  for (const [name, kind] of Object.entries(REQUIRED)) {
    const ok = kind === "integer" ? Number.isSafeInteger(r[name]) : typeof r[name] === "string";
    if (!ok) throw new ReceiptInvalid("malformed", `its \`${name}\` claim is missing or not a${kind === "integer" ? "n" : ""} ${kind}`);
  }
  for (const name of OPTIONAL) {
    if (r[name] !== undefined && r[name] !== null && typeof r[name] !== "string") {
      throw new ReceiptInvalid("malformed", `its \`${name}\` claim is not a string`);
    }
  }
  return c as Claims;
}

const SIGNATURE_CODES: Record<string, string> = {
  ERR_JWS_INVALID: "malformed",
  ERR_JOSE_ALG_NOT_ALLOWED: "algorithm",
  ERR_JOSE_NOT_SUPPORTED: "algorithm",
};

/** The payload of `token`, its signature checked with `keys`. */
async function signed(token: unknown, keys: unknown): Promise<{ payload: Uint8Array; typ: unknown }> {
  if (typeof token !== "string" || token.split(".").length !== 3) {
    throw new ReceiptInvalid("malformed", "a receipt is a compact JWS: three parts joined by dots");
  }
  let keySet;
  try {
    keySet = createLocalJWKSet(keys as JSONWebKeySet);
  } catch (err) {
    throw new ReceiptInvalid("malformed", `the keys are not a JWK Set of Assent's (${(err as Error).message})`);
  }
  try {
    const r = await compactVerify(token, keySet, { algorithms: ["EdDSA", "Ed25519"] });
    return { payload: r.payload, typ: r.protectedHeader.typ };
  } catch (err) {
    const code = SIGNATURE_CODES[(err as { code?: string }).code ?? ""] ?? "bad_signature";
    throw new ReceiptInvalid(code, `not a receipt Assent's keys verify (${(err as Error).message})`);
  }
}

/** The receipt's claims, or ReceiptInvalid with a code saying why not, and never another error,
 * whatever token, keys, arguments or payload it is given. Only an approval verifies unless
 * `e.outcome` names the outcome expected instead (`not_approved`; another named outcome is
 * `wrong_outcome`). Arguments or a payload holding an integer beyond 2^53-1 cannot be checked
 * (`unsafe_integer`). */
export async function verifyReceipt(token: string, keys: unknown, e: Expect = {}): Promise<Claims> {
  const { payload, typ } = await signed(token, keys);
  if (typ !== "assent-receipt+jwt") throw new ReceiptInvalid("algorithm", "not typed as an Assent receipt");
  const c = claimsOf(payload);
  if (e.now !== undefined && typeof e.now !== "number") throw new ReceiptInvalid("malformed", "`now` is Unix seconds");
  const now = e.now ?? Date.now() / 1000;
  if (now > c.exp + SKEW) throw new ReceiptInvalid("expired", `expired at ${c.exp}`);
  if (c.iat > now + SKEW) throw new ReceiptInvalid("not_yet_valid", `issued in the future (${c.iat})`);
  const want = e.outcome ?? "approve";
  if (c.outcome !== want) {
    throw new ReceiptInvalid(want === "approve" ? "not_approved" : "wrong_outcome", `the decision was ${c.outcome}, not ${want}`);
  }
  if (e.audience !== undefined && c.aud !== e.audience) {
    throw new ReceiptInvalid("wrong_audience", `made for ${JSON.stringify(c.aud ?? null)}, not ${JSON.stringify(e.audience)}`);
  }
  if (e.payload !== undefined && c.payload_sha256 !== checkedHash(e.payload, "the payload")) {
    throw new ReceiptInvalid("payload_mismatch", "the payload is not the one approved");
  }
  // `input`, given alone or with `tool`, is checked either way (given alone, it was once ignored).
  if (e.tool !== undefined || "input" in e) {
    if (c.kind !== "tool.call" || (e.tool !== undefined && !namesTool(c.tool ?? "", e.tool))) {
      throw new ReceiptInvalid("wrong_tool", `made for ${JSON.stringify(c.tool ?? null)}`);
    }
    if (c.input_sha256 !== checkedHash(e.input, "the arguments")) throw new ReceiptInvalid("payload_mismatch", "the arguments are not the ones approved");
  }
  return c;
}
