/** Checking a decision's receipt offline: Assent's Ed25519 signature (a compact JWS, checked by
 * `jose`) with its public keys, and that it is for what is about to run (hashes over RFC 8785
 * JSON, by `canonicalize`). */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { createLocalJWKSet, jwtVerify } from "jose";
import { ReceiptInvalid } from "./errors.js";
/** Seconds of clock difference tolerated. */
export const SKEW = 60;
/** SHA-256 (hex) of the RFC 8785 form of `value`. */
export function sha256Jcs(value) {
    return createHash("sha256").update(canonicalize(value) ?? "").digest("hex");
}
/** Whether two JSON values are the same value (compared in their RFC 8785 form: key order and
 * how a number is written do not matter). */
export function sameJson(a, b) {
    return canonicalize(a) === canonicalize(b);
}
/** Whether a receipt's `tool` names `name`: the same, or `mcp__SERVER__name`. */
export function namesTool(claimed, name) {
    if (claimed === name)
        return true;
    if (!claimed.startsWith("mcp__") || !claimed.endsWith(`__${name}`))
        return false;
    const server = claimed.slice(5, claimed.length - name.length - 2);
    return server.length > 0 && !server.includes("__");
}
/** The receipt's claims, or ReceiptInvalid with a code saying why not. */
export async function verifyReceipt(token, keys, e = {}) {
    let c;
    try {
        const r = await jwtVerify(token, createLocalJWKSet(keys), {
            algorithms: ["EdDSA", "Ed25519"],
            typ: "assent-receipt+jwt",
            clockTolerance: SKEW,
            currentDate: e.now === undefined ? undefined : new Date(e.now * 1000),
        });
        c = r.payload;
    }
    catch (err) {
        const code = err.code === "ERR_JWT_EXPIRED" ? "expired" : "bad_signature";
        throw new ReceiptInvalid(code, `not a valid Assent receipt (${err.message})`);
    }
    if (e.audience !== undefined && c.aud !== e.audience) {
        throw new ReceiptInvalid("wrong_audience", `made for ${JSON.stringify(c.aud ?? null)}, not ${JSON.stringify(e.audience)}`);
    }
    if (e.payload !== undefined && c.payload_sha256 !== sha256Jcs(e.payload)) {
        throw new ReceiptInvalid("payload_mismatch", "the payload is not the one approved");
    }
    if (e.tool !== undefined) {
        if (c.kind !== "tool.call" || !namesTool(c.tool ?? "", e.tool))
            throw new ReceiptInvalid("wrong_tool", `made for ${JSON.stringify(c.tool ?? null)}`);
        if (c.input_sha256 !== sha256Jcs(e.input))
            throw new ReceiptInvalid("payload_mismatch", "the arguments are not the ones approved");
    }
    if ((e.approved ?? true) && c.outcome !== "approve")
        throw new ReceiptInvalid("not_approved", `the decision was ${c.outcome}`);
    return c;
}
