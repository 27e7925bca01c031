"""Checking a decision's receipt offline: Assent's signature (Ed25519, a compact JWS) with its
public keys, and that it is what a tool is about to act on. Needs `pip install assent[receipts]`
(joserfc for JOSE, rfc8785 for the canonical JSON the hashes are taken over)."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from .errors import ReceiptInvalid

#: Seconds of clock difference tolerated on `iat` and `exp`.
SKEW = 60


def sha256_jcs(value: Any) -> str:
    """SHA-256 (hex) of the RFC 8785 (JCS) form of `value`: what receipts' hashes name."""
    import rfc8785

    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def names_tool(claimed: str, name: str) -> bool:
    """Whether a receipt's `tool` names `name`: the same, or as an MCP client names it
    (`mcp__SERVER__name`)."""
    if claimed == name:
        return True
    if not claimed.startswith("mcp__") or not claimed.endswith("__" + name):
        return False
    server = claimed[len("mcp__"): -len("__" + name)]
    return bool(server) and "__" not in server


def verify_receipt(token: str, keys: dict, *, tool: str | None = None, input: Any = None, payload: Any = None,
                   audience: str | None = None, approved: bool = True, now: float | None = None) -> dict:
    """The receipt's claims, or ReceiptInvalid with a code saying why not.

    `keys` is Assent's JWK Set (`assent receipt keys`, or `GET /v1/keys`). With `tool` and
    `input`, the receipt must be for a call of this tool with exactly these arguments; with
    `payload`, for exactly this payload; with `audience`, made for it; with `approved` (the
    default), an approval. A tool that must not act twice keeps the `jti` of each receipt it
    acted on until its `exp`."""
    from joserfc import jws
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    try:
        obj = jws.deserialize_compact(token, KeySet.import_key_set(keys), algorithms=["EdDSA"])
    except (JoseError, ValueError, TypeError) as e:
        raise ReceiptInvalid("bad_signature", f"not a receipt Assent's keys verify ({type(e).__name__})") from None
    if obj.headers().get("typ") != "assent-receipt+jwt":
        raise ReceiptInvalid("algorithm", "not typed as an Assent receipt")
    try:
        c = json.loads(obj.payload)
    except ValueError:
        raise ReceiptInvalid("malformed", "its claims are not JSON") from None
    t = time.time() if now is None else now
    if t > c["exp"] + SKEW:
        raise ReceiptInvalid("expired", f"expired at {c['exp']}")
    if c["iat"] > t + SKEW:
        raise ReceiptInvalid("not_yet_valid", f"issued in the future ({c['iat']})")
    if audience is not None and c.get("aud") != audience:
        raise ReceiptInvalid("wrong_audience", f"made for {c.get('aud')!r}, not {audience!r}")
    if payload is not None and c["payload_sha256"] != sha256_jcs(payload):
        raise ReceiptInvalid("payload_mismatch", "the payload is not the one approved")
    if tool is not None:
        if c["kind"] != "tool.call" or not names_tool(c.get("tool") or "", tool):
            raise ReceiptInvalid("wrong_tool", f"made for {c.get('tool')!r}")
        if c.get("input_sha256") != sha256_jcs(input):
            raise ReceiptInvalid("payload_mismatch", "the arguments are not the ones approved")
    if approved and c["outcome"] != "approve":
        raise ReceiptInvalid("not_approved", f"the decision was {c['outcome']!r}")
    return c
