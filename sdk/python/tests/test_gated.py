"""`@gated` against the real server: a function runs only once the person approves, with what
they approved; otherwise a typed outcome and no call."""

from __future__ import annotations

import asyncio

import pytest

import assent
from assent import Assent, gated

calls: list = []


@gated(preview=lambda post_id, force=False: f"Delete post {post_id}")
def delete_post(post_id: int, force: bool = False) -> str:
    calls.append((post_id, force))
    return f"deleted {post_id}"


def test_approved_runs_with_the_persons_edits(server):
    calls.clear()
    server.decide_next({"outcome": "approve", "edits": {"input": {"post_id": 8, "force": False}}})
    assert delete_post(7, force=True) == "deleted 8"
    assert calls == [(8, False)]
    p = server.owner_call("GET", "/proposals?status=approved")["items"][0]
    assert p["title"] == "Delete post 7" and p["payload"]["tool"] == "delete_post"
    assert p["payload"]["input"] == {"post_id": 7, "force": True}


def test_rejected_refined_and_timed_out_never_run(server):
    calls.clear()
    server.decide_next({"outcome": "reject", "reason": "keep it"})
    with pytest.raises(assent.Rejected) as e:
        delete_post(7)
    assert e.value.reason == "keep it"
    server.decide_next({"outcome": "refine", "feedback": "archive instead"})
    with pytest.raises(assent.Refined) as e:
        delete_post(7)
    assert e.value.feedback == "archive instead"

    @gated(timeout=1)
    def slow(x: int) -> None:
        calls.append(x)

    # Past its timeout the call withdraws its proposal, and says so: Withdrawn, as the proposal
    # is in Assent (Expired is Assent's own expiry, `expires_in`).
    with pytest.raises(assent.Withdrawn):
        slow(1)
    assert calls == []
    gone = server.owner_call("GET", "/proposals?status=withdrawn")["items"]
    assert [g["payload"]["tool"] for g in gone] == ["slow"], "the timed-out proposal was withdrawn"


def test_requires_approval_false_runs_directly_and_async_functions_wait(server):
    @gated(requires_approval=False)
    def read(x: int) -> int:
        return x + 1

    assert read(1) == 2
    assert server.owner_call("GET", "/proposals")["items"] == []

    @gated(tool="send_mail")
    async def send(to: str, body: str) -> str:
        return f"sent to {to}: {body}"

    server.decide_next({"outcome": "approve"})
    assert asyncio.run(send("ann@example.com", "hi")) == "sent to ann@example.com: hi"


def test_a_receipt_is_checked_before_running(server):
    with Assent() as client:

        @gated(client=client, receipt=True, audience="blog")
        def publish(post_id: int) -> str:
            return f"published {post_id}"

        server.decide_next({"outcome": "approve"})
        assert publish(3) == "published 3"
        keys = client.keys()
        p = server.owner_call("GET", "/proposals?status=approved")["items"][0]
        token = server.owner_call("GET", f"/proposals/{p['id']}")["decision"]["receipt"]
    c = assent.verify_receipt(token, keys, tool="publish", input={"post_id": 3}, audience="blog")
    assert c["jti"] == p["id"]
    for kwargs, code in [
        ({"tool": "publish", "input": {"post_id": 4}}, "payload_mismatch"),
        ({"tool": "unpublish", "input": {"post_id": 3}}, "wrong_tool"),
        ({"audience": "mail"}, "wrong_audience"),
        ({"now": c["exp"] + 61}, "expired"),
    ]:
        with pytest.raises(assent.ReceiptInvalid) as e:
            assent.verify_receipt(token, keys, **kwargs)
        assert e.value.code == code
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    with pytest.raises(assent.ReceiptInvalid) as e:
        assent.verify_receipt(forged, keys)
    assert e.value.code == "bad_signature"


def test_assent_not_running_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSENT_HOME", str(tmp_path))
    calls.clear()
    with pytest.raises(assent.AssentNotRunning):
        delete_post(1)
    assert calls == []


def test_a_write_built_by_the_function_is_carried_out_by_assent(server, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("old\n")

    @gated(kind="file.write", preview=lambda text: "Update the notes")
    def save_notes(text: str) -> dict:
        return {"path": str(target), "content": text}

    server.decide_next({"outcome": "approve", "edits": {"content": "edited by the person\n"}})
    result = save_notes("new\n")
    assert target.read_text() == "edited by the person\n", "Assent wrote what the person approved"
    assert result is not None
    p = server.owner_call("GET", "/proposals?status=applied")["items"][0]
    assert (p["kind"], p["title"]) == ("file.write", "Update the notes")

    server.decide_next({"outcome": "reject", "reason": "leave them"})
    with pytest.raises(assent.Rejected):
        save_notes("other\n")
    assert target.read_text() == "edited by the person\n"


def test_the_function_receives_exactly_the_approved_arguments(server):
    got = []

    @gated
    def remove(**args) -> None:
        got.append(args)

    proposed = {"path": "build", "recursive": True}
    for edited in [{"path": "build"},                                         # deletes an argument
                   {"path": "build", "recursive": True, "dry_run": True},     # adds one
                   {"path": "dist", "recursive": True}]:                      # changes one
        server.decide_next({"outcome": "approve", "edits": {"input": edited}})
        remove(**proposed)
        assert got[-1] == edited, "exactly the person's input, nothing of the proposed one merged back"
    server.decide_next({"outcome": "approve"})
    remove(**proposed)
    assert got[-1] == proposed, "approved as proposed"


def test_approved_arguments_that_do_not_fit_never_run(server):
    calls.clear()
    for edited, why in [({"post_id": 7}, "leave out `force`"),                      # would come back as False
                        ({"post_id": 7, "force": True, "purge": True}, "add `purge`"),
                        ("7", "not arguments by name")]:
        server.decide_next({"outcome": "approve", "edits": {"input": edited}})
        with pytest.raises(assent.Failed) as e:
            delete_post(7, force=True)
        assert e.value.code == "arguments_unfit" and why in str(e.value)
    assert calls == [], "the function did not run"
    server.decide_next({"outcome": "approve", "edits": {"input": {"post_id": 9, "force": False}}})
    assert delete_post(7, force=True) == "deleted 9"
    assert calls == [(9, False)]

    @gated
    async def tag(post_id: int, *tags: str) -> tuple:
        return post_id, tags

    server.decide_next({"outcome": "approve", "edits": {"input": {"post_id": 3, "tags": ["a", "b"]}}})
    assert asyncio.run(tag(3, "a")) == (3, ("a", "b"))
