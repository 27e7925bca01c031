"""`verify_receipt` on receipts signed here with a key of the test's own (its JWK Set given as
Assent's keys): the edge values and malformed input all end in ReceiptInvalid, never another
error, and only an approval verifies unless another outcome is asked for."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from joserfc import jws
from joserfc.jwk import OKPKey

from assent import ReceiptInvalid, verify_receipt
from assent.receipts import sha256_jcs

KEY = OKPKey.generate_key("Ed25519", parameters={"kid": "test-key"})
KEYS = {"keys": [KEY.as_dict(private=False)]}


def sign(claims: object, typ: str = "assent-receipt+jwt") -> str:
    header = {"alg": "EdDSA", "typ": typ, "kid": "test-key"}
    return jws.serialize_compact(header, json.dumps(claims), KEY, algorithms=["EdDSA"])


def claims(**over: object) -> dict:
    now = int(time.time())
    c = {"iss": "assent", "sub": "agent", "jti": "p1", "iat": now, "exp": now + 600, "outcome": "approve",
         "kind": "tool.call", "tool": "delete_post", "input_sha256": sha256_jcs({"post_id": 7}),
         "payload_sha256": "00" * 32, "proposed_sha256": "00" * 32, "decided_by": "person", "channel": "app"}
    c.update(over)
    return c


def code_of(token: object, keys: object = KEYS, **expect: object) -> str:
    with pytest.raises(ReceiptInvalid) as e:
        verify_receipt(token, keys, **expect)  # type: ignore[arg-type]
    return e.value.code


def test_a_good_receipt_verifies():
    c = verify_receipt(sign(claims()), KEYS, tool="delete_post", input={"post_id": 7})
    assert c["jti"] == "p1"


def test_integers_past_2_53_cannot_be_checked_even_on_a_genuine_receipt():
    # The hash Assent took over {"post_id": 2**60 + 1}, as the JSON text it was sent as.
    big = 2**60 + 1
    text = json.dumps({"post_id": big}, separators=(",", ":")).encode()
    token = sign(claims(input_sha256=hashlib.sha256(text).hexdigest(), payload_sha256=hashlib.sha256(text).hexdigest()))
    assert code_of(token, tool="delete_post", input={"post_id": big}) == "unsafe_integer"
    assert code_of(token, payload={"post_id": big}) == "unsafe_integer"
    assert code_of(token, tool="delete_post", input={"ids": [1, -(2**53)]}) == "unsafe_integer"
    edge = 2**53 - 1
    at_edge = sign(claims(input_sha256=sha256_jcs({"post_id": edge})))
    assert verify_receipt(at_edge, KEYS, tool="delete_post", input={"post_id": edge})["jti"] == "p1"
    assert verify_receipt(sign(claims(input_sha256=sha256_jcs({"post_id": -edge}))), KEYS, tool="delete_post",
                          input={"post_id": -edge})


def test_only_an_approval_verifies_unless_another_outcome_is_asked_for():
    rejected = sign(claims(outcome="reject"))
    assert code_of(rejected) == "not_approved"
    assert code_of(rejected, tool="delete_post", input={"post_id": 7}) == "not_approved"
    assert verify_receipt(rejected, KEYS, outcome="reject")["outcome"] == "reject"
    assert code_of(rejected, outcome="refine") == "wrong_outcome"
    assert code_of(sign(claims()), outcome="reject") == "wrong_outcome"


@pytest.mark.parametrize("token", [None, 42, b"a.b.c", "", "not a receipt", "a.b.c", "a.b.c.d"])
def test_a_malformed_token_is_receipt_invalid(token):
    assert code_of(token) in ("malformed", "bad_signature")


@pytest.mark.parametrize("keys", [None, [], "keys", {"keys": "no"}, {"keys": [{"kty": "OKP"}]}, {"nope": 1}])
def test_malformed_keys_are_receipt_invalid(keys):
    assert code_of(sign(claims()), keys) in ("malformed", "bad_signature")


@pytest.mark.parametrize("body", [
    [1, 2], "a string", claims(exp=None), claims(exp="tomorrow"), claims(iat=True), claims(outcome=None),
    claims(kind=3), claims(payload_sha256=None), claims(tool=["delete_post"]), claims(aud=5),
])
def test_malformed_claims_are_receipt_invalid(body):
    assert code_of(sign(body)) == "malformed"


def test_values_that_are_not_json_cannot_be_checked():
    token = sign(claims())
    cycle: dict = {}
    cycle["self"] = cycle
    for bad in [{"x": float("nan")}, {"x": float("inf")}, {"x": {1, 2}}, {1: "int key"}, {"x": object()},
                {"x": "\ud800"}, cycle]:
        assert code_of(token, tool="delete_post", input=bad) == "malformed"
        assert code_of(token, payload=bad) == "malformed"
    assert code_of(token, now="now") == "malformed"


def test_the_other_refusals_keep_their_codes():
    assert code_of(sign(claims(), typ="JWT")) == "algorithm"
    assert code_of(sign(claims(exp=int(time.time()) - 120))) == "expired"
    assert code_of(sign(claims(iat=int(time.time()) + 600))) == "not_yet_valid"
    assert code_of(sign(claims()), tool="delete_post", input={"post_id": 8}) == "payload_mismatch"
    assert code_of(sign(claims()), audience="blog") == "wrong_audience"
    other = OKPKey.generate_key("Ed25519", parameters={"kid": "test-key"})
    assert code_of(sign(claims()), {"keys": [other.as_dict(private=False)]}) == "bad_signature"


def test_input_given_alone_is_checked():
    # A receipt for {"id": 9007199254740991} does not verify against {"id": 1} when no tool is named.
    token = sign(claims(input_sha256=sha256_jcs({"id": 2**53 - 1})))
    assert code_of(token, input={"id": 1}) == "payload_mismatch"
    assert verify_receipt(token, KEYS, input={"id": 2**53 - 1})["jti"] == "p1"
    assert code_of(sign(claims(kind="file.write", tool=None)), input={"id": 1}) == "wrong_tool"
    assert code_of(token, input=None) == "payload_mismatch"


def test_without_the_receipts_extra_it_is_receipt_invalid(monkeypatch):
    """Neither joserfc nor rfc8785 importable (the `receipts` extra not installed): ReceiptInvalid
    with `not_installed`, never ModuleNotFoundError, for a token and for a hash."""
    import builtins

    real = builtins.__import__
    token = sign(claims())

    def refuse(name, *args, **kwargs):
        if name.split(".")[0] in ("joserfc", "rfc8785"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    assert code_of(token, tool="delete_post", input={"post_id": 7}) == "not_installed"
    with pytest.raises(ReceiptInvalid) as e:
        sha256_jcs({"a": 1})
    assert e.value.code == "not_installed" and "assent[receipts]" in str(e.value)
