"""Checking a decision's receipt offline: Assent's signature (Ed25519, a compact JWS) with its
public keys, and that it is what a tool is about to act on. Needs `pip install assent[receipts]`
(joserfc for JOSE, rfc8785 for the canonical JSON the hashes are taken over).

Whatever token, keys, arguments or payload it is given, it answers with the claims or raises
ReceiptInvalid: never another error."""

from __future__ import annotations

import hashlib
import json
import math
import time
from typing import Any

from .errors import ReceiptInvalid

#: Seconds of clock difference tolerated on `iat` and `exp`.
SKEW = 60

#: The largest integer (in magnitude) a hash can be checked over. Past it a JSON number is not
#: one value everywhere (JavaScript reads 2**60 + 1 as 2**60, and RFC 8785 writes numbers as
#: JavaScript does), so a hash over it cannot say unambiguously what was approved.
MAX_SAFE_INTEGER = 2**53 - 1

#: The claims every receipt has, and their types (`aud`, `tool` and `input_sha256` may be absent).
_REQUIRED = {"iat": int, "exp": int, "outcome": str, "kind": str, "payload_sha256": str}
_OPTIONAL = ("aud", "tool", "input_sha256")


def _check_hashable(value: Any, what: str, path: str = "") -> None:
    """Raises ReceiptInvalid unless `value` is JSON whose RFC 8785 form is one unambiguous
    value: an integer beyond MAX_SAFE_INTEGER (`unsafe_integer`), or something that is not JSON
    at all (`malformed`)."""
    where = f"{what}{path}"
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ReceiptInvalid("unsafe_integer", f"{where} is {value}, beyond 2^53-1: no hash of it is unambiguous")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ReceiptInvalid("malformed", f"{where} is {value}, which is not a JSON number")
        return
    if isinstance(value, (list, tuple)):
        for n, v in enumerate(value):
            _check_hashable(v, what, f"{path}[{n}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ReceiptInvalid("malformed", f"{where} has the key {k!r}, and JSON's keys are strings")
            _check_hashable(v, what, f"{path}.{k}")
        return
    raise ReceiptInvalid("malformed", f"{where} is a {type(value).__name__}, which is not JSON")


def sha256_jcs(value: Any) -> str:
    """SHA-256 (hex) of the RFC 8785 (JCS) form of `value`: what receipts' hashes name."""
    try:
        import rfc8785
    except ImportError:
        raise _not_installed() from None

    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def _checked_hash(value: Any, what: str) -> str:
    """The hash of `value` as a receipt names it, or ReceiptInvalid when it cannot be taken
    unambiguously (a cycle, or a string RFC 8785 cannot write, is `malformed` too)."""
    try:
        _check_hashable(value, what)
        return sha256_jcs(value)
    except RecursionError:
        raise ReceiptInvalid("malformed", f"{what}: nested too deep, or a cycle") from None
    except (ValueError, TypeError, UnicodeError) as e:
        raise ReceiptInvalid("malformed", f"{what}: not JSON ({e})") from None


def names_tool(claimed: str, name: str) -> bool:
    """Whether a receipt's `tool` names `name`: the same, or as an MCP client names it
    (`mcp__SERVER__name`)."""
    if claimed == name:
        return True
    if not claimed.startswith("mcp__") or not claimed.endswith("__" + name):
        return False
    server = claimed[len("mcp__"): -len("__" + name)]
    return bool(server) and "__" not in server


def _claims(raw: bytes) -> dict:
    """The claims, checked for the shape every receipt has."""
    try:
        c = json.loads(raw)
    except ValueError:
        raise ReceiptInvalid("malformed", "its claims are not JSON") from None
    if not isinstance(c, dict):
        raise ReceiptInvalid("malformed", "its claims are not a JSON object")
    for name, kind in _REQUIRED.items():
        if not isinstance(c.get(name), kind) or isinstance(c.get(name), bool):
            raise ReceiptInvalid("malformed", f"its `{name}` claim is missing or not a {kind.__name__}")
    for name in _OPTIONAL:
        if c.get(name) is not None and not isinstance(c[name], str):
            raise ReceiptInvalid("malformed", f"its `{name}` claim is not a string")
    return c


def _not_installed() -> ReceiptInvalid:
    """What checking a receipt without the `receipts` extra raises: it cannot be checked here."""
    return ReceiptInvalid("not_installed", "checking receipts needs `pip install assent[receipts]` (joserfc, rfc8785)")


def _signed(token: Any, keys: Any) -> Any:
    """The JWS, its signature checked with `keys`."""
    try:
        from joserfc import jws
        from joserfc.jwk import KeySet
    except ImportError:
        raise _not_installed() from None

    if not isinstance(token, str) or token.count(".") != 2:
        raise ReceiptInvalid("malformed", "a receipt is a compact JWS: three parts joined by dots")
    try:
        key_set = KeySet.import_key_set(keys)
    except Exception as e:  # joserfc raises many kinds for a bad key set; all mean the same here
        raise ReceiptInvalid("malformed", f"the keys are not a JWK Set of Assent's ({type(e).__name__})") from None
    try:
        return jws.deserialize_compact(token, key_set, algorithms=["EdDSA"])
    except Exception as e:  # any failure to read or verify it: the signature does not hold
        raise ReceiptInvalid("bad_signature", f"not a receipt Assent's keys verify ({type(e).__name__})") from None


class _Unset:
    """No value given (an input may be JSON `null`, so `None` cannot say it)."""


_UNSET: Any = _Unset()


def verify_receipt(token: str, keys: dict, *, tool: str | None = None, input: Any = _UNSET, payload: Any = None,
                   audience: str | None = None, outcome: str = "approve", now: float | None = None) -> dict:
    """The receipt's claims, or ReceiptInvalid with a code saying why not.

    `keys` is Assent's JWK Set (`assent receipt keys`, or `GET /v1/keys`). The receipt must be
    for an approval (else `not_approved`), unless `outcome` names the outcome expected instead
    (`"reject"`, `"refine"`; another is `wrong_outcome`). With `tool`, it must be for a call of
    this tool; with `input` (alone or with `tool`), for a call with exactly these arguments
    (`tool` without `input` checks they were `null`); with `payload`, for exactly this
    payload; with `audience`, made for it. Arguments or a payload holding an integer beyond
    2^53-1 cannot be checked (`unsafe_integer`): no hash of them is unambiguous. A tool that
    must not act twice keeps the `jti` of each receipt it acted on until its `exp`."""
    obj = _signed(token, keys)
    if obj.headers().get("typ") != "assent-receipt+jwt":
        raise ReceiptInvalid("algorithm", "not typed as an Assent receipt")
    c = _claims(obj.payload)
    if now is not None and (not isinstance(now, (int, float)) or isinstance(now, bool)):
        raise ReceiptInvalid("malformed", "`now` is Unix seconds")
    t = time.time() if now is None else now
    if t > c["exp"] + SKEW:
        raise ReceiptInvalid("expired", f"expired at {c['exp']}")
    if c["iat"] > t + SKEW:
        raise ReceiptInvalid("not_yet_valid", f"issued in the future ({c['iat']})")
    if c["outcome"] != outcome:
        code = "not_approved" if outcome == "approve" else "wrong_outcome"
        raise ReceiptInvalid(code, f"the decision was {c['outcome']!r}, not {outcome!r}")
    if audience is not None and c.get("aud") != audience:
        raise ReceiptInvalid("wrong_audience", f"made for {c.get('aud')!r}, not {audience!r}")
    if payload is not None and c["payload_sha256"] != _checked_hash(payload, "the payload"):
        raise ReceiptInvalid("payload_mismatch", "the payload is not the one approved")
    if tool is not None or input is not _UNSET:
        if c["kind"] != "tool.call" or (tool is not None and not names_tool(c.get("tool") or "", tool)):
            raise ReceiptInvalid("wrong_tool", f"made for {c.get('tool')!r}")
        if c.get("input_sha256") != _checked_hash(None if input is _UNSET else input, "the arguments"):
            raise ReceiptInvalid("payload_mismatch", "the arguments are not the ones approved")
    return c
