"""The SDK against the real server: finding it, proposing, waiting, withdrawing, events, and the
errors a caller gets instead of a bare HTTP error."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import http.server
import json
import threading
import time
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

import assent
from assent import Assent, AsyncAssent


def test_propose_wait_and_the_decision(server):
    with Assent() as a:
        p = a.propose_tool("deploy", {"env": "prod"}, title="Deploy", audience="deployer", session_id="task-1")
        assert (p.status.value, p.kind, p.audience, p.session_id) == ("pending", "tool.call", "deployer", "task-1")
        server.decide_next({"outcome": "approve", "edits": {"input": {"env": "staging"}}})
        done = a.wait(p.id, timeout=20)
        assert done.status.value == "approved" and done.settled
        assert assent.outcome(done) == {"env": "staging"}, "the person's edit is what runs"
        assert done.decision.receipt.count(".") == 2


def test_waits_past_the_servers_cap_and_a_timeout_can_withdraw(server):
    with Assent() as a:
        p = a.propose_tool("t", {})
        # Each long-poll is one second here, so the wait asks again several times.
        t = server.decide_next({"outcome": "reject", "reason": "not now"})
        t.join()
        with pytest.raises(assent.Rejected) as e:
            assent.outcome(a.wait(p.id, poll=1))
        assert e.value.reason == "not now"
        q = a.propose_tool("t", {"n": 2})
        last = a.wait(q.id, timeout=1.5, poll=1, withdraw_on_timeout=True)
        assert last.status.value == "withdrawn"
        r = a.propose_tool("t", {"n": 3})
        assert a.wait(r.id, timeout=1, poll=1).status.value == "pending", "without withdraw_on_timeout it stays"


def test_a_waits_last_second_is_one_request_not_hundreds(server):
    """wait(timeout=2.9): a two-second long-poll, then the last 0.9 s slept, then one look; it
    sent hundreds of requests in its last second when the server's whole-second wait was 0."""
    with Assent() as a:
        p = a.propose_tool("t", {"n": 4})
        calls = []
        real = a._call

        def counted(**kw):
            calls.append(kw["params"]["wait"])
            return real(**kw)

        a._call = counted
        began = time.monotonic()
        assert a.wait(p.id, timeout=2.9).status.value == "pending"
        took = time.monotonic() - began
        assert len(calls) <= 3, calls
        assert 2.8 <= took < 4, took


def test_cancelling_an_async_wait_withdraws(server):
    async def go():
        async with AsyncAssent() as a:
            p = await a.propose_tool("t", {})
            task = asyncio.create_task(a.wait(p.id))
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return (await a.get(p.id)).status.value

    assert asyncio.run(go()) == "withdrawn"


def test_events_follow_the_agents_proposals(server):
    with Assent() as a:
        seen = []

        def listen():
            with Assent() as b:
                for ev in b.events():
                    seen.append(ev)
                    if ev.get("type") == "proposal.updated":
                        return

        t = threading.Thread(target=listen, daemon=True)
        t.start()
        import time

        time.sleep(0.5)
        p = a.propose_tool("t", {})
        a.withdraw(p.id)
        t.join(10)
        assert [e["type"] for e in seen][-2:] == ["proposal.created", "proposal.updated"]


def test_bad_input_is_a_typed_refusal_and_a_bad_token_is_unauthorized(server):
    with Assent() as a:
        with pytest.raises(assent.Refused) as e:
            a.propose("no.such.kind", {})
        assert e.value.status in (400, 422) and e.value.code == "unknown_kind"
        with pytest.raises(assent.Refused) as e:
            a.propose_tool("t", {}, audience="x" * 201)
        assert "audience" in e.value.message
    with Assent(token="asnt_wrong") as a, pytest.raises(assent.Unauthorized):
        a.propose_tool("t", {})


def test_not_running_and_an_impostor(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSENT_HOME", str(tmp_path))
    with Assent() as a, pytest.raises(assent.AssentNotRunning):
        a.propose_tool("t", {})
    # Something else on the port, that cannot prove it is this home's Assent, never gets the token.
    got = []

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            got.append(self.headers.get("authorization"))
            body = json.dumps({"proof": "00" * 32}).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    (tmp_path / "server.json").write_text(json.dumps({"url": url, "pid": 1, "version": "x", "proof_key": "ab" * 32}))
    (tmp_path / "agent.token").write_text("asnt_secret")
    with Assent() as a, pytest.raises(assent.Impostor):
        a.propose_tool("t", {})
    srv.shutdown()
    assert got == [None], "only the unauthenticated hello reached it"


def listener(answer) -> tuple[str, list, http.server.HTTPServer]:
    """A program on a port of its own that answers every request with `answer(handler)` and keeps
    each request's path and authorization."""
    got: list = []

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            got.append((self.path, self.headers.get("authorization")))
            answer(self)

        do_POST = do_DELETE = do_GET

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{srv.server_address[1]}", got, srv


def send(h: http.server.BaseHTTPRequestHandler, body: bytes, status: int = 200, **headers: str) -> None:
    h.send_response(status)
    for k, v in {"content-length": str(len(body)), **headers}.items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(body)


def test_a_url_and_a_token_without_the_servers_key_say_what_is_missing(server, tmp_path, monkeypatch):
    # A user with only ASSENT_URL and ASSENT_TOKEN: nothing can prove the server at the URL is
    # Assent, so nothing at all is sent to it, and the error says what is missing.
    url, got, srv = listener(lambda h: send(h, b"{}"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("ASSENT_HOME", str(elsewhere))
    monkeypatch.setenv("ASSENT_URL", url)
    monkeypatch.setenv("ASSENT_TOKEN", "asnt_secret")
    with Assent() as a, pytest.raises(assent.NoProofKey) as e:
        a.propose_tool("t", {})
    assert not isinstance(e.value, assent.Impostor)
    assert f"no server.json in {elsewhere}" in str(e.value) and "ASSENT_PROOF_KEY" in str(e.value)
    # A home whose server.json is another server's: its key proves nothing about this one.
    (elsewhere / "server.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "proof_key": "ab" * 32}))
    with Assent() as a, pytest.raises(assent.NoProofKey) as e:
        a.propose_tool("t", {})
    assert f"is for http://127.0.0.1:9, not {url}" in str(e.value)
    srv.shutdown()
    assert got == [], "nothing, not even the hello, went to an address nothing could prove"

    # The real server's URL and token, and its key (ASSENT_PROOF_KEY, or its home): it proves
    # itself, and the proposal is filed.
    monkeypatch.setenv("ASSENT_URL", server.url + "/")
    monkeypatch.setenv("ASSENT_TOKEN", (server.home / "agent.token").read_text().strip())
    monkeypatch.setenv("ASSENT_PROOF_KEY", json.loads((server.home / "server.json").read_text())["proof_key"])
    with Assent() as a:
        assert a.propose_tool("t", {"n": 1}).status.value == "pending"
    monkeypatch.delenv("ASSENT_PROOF_KEY")
    monkeypatch.setenv("ASSENT_HOME", str(server.home))

    async def go():
        async with AsyncAssent() as a:
            return (await a.propose_tool("t", {"n": 2})).status.value

    assert asyncio.run(go()) == "pending"


def test_a_batch_in_one_group_and_a_sessions_counts(server):
    with Assent() as a:
        item = lambda c: {"kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": c}}, "session_id": "t-1"}
        b = a.propose_batch([item("make a"), {"kind": "nope", "payload": {}}, item("make b")], group_id="rel-1",
                            idempotency_key="k-1")
        assert (b.group_id, b.filed, b.refused) == ("rel-1", 2, 1)
        assert b.items[1].error.code == "unknown_kind"
        again = a.propose_batch([item("make a")], group_id="rel-1", idempotency_key="k-1")
        assert again.items[0].proposal.id == b.items[0].proposal.id, "a retry files nothing twice"
        server.owner_call("POST", f"/proposals/{b.items[0].proposal.id}/decision", {"outcome": "approve"})
        c = a.session("t-1")
        assert (c.pending, c.total, c.by_status) == (1, 2, {"pending": 1, "approved": 1})


def test_the_server_dying_mid_wait_is_assent_not_running(server):
    import time

    with Assent() as a:
        p = a.propose_tool("t", {})
        threading.Timer(0.5, server.proc.kill).start()
        started = time.monotonic()
        with pytest.raises(assent.AssentNotRunning) as e:
            a.wait(p.id, timeout=30)
        assert time.monotonic() - started < 10, "the wait ended when the server did"
        assert "stopped answering" in str(e.value)
        assert isinstance(e.value.__cause__, httpx.TransportError), "the cause is chained"
        with pytest.raises(assent.AssentNotRunning):
            a.get(p.id)


def test_the_server_dying_mid_async_wait_is_assent_not_running(server):
    async def go():
        async with AsyncAssent() as a:
            p = await a.propose_tool("t", {})
            asyncio.get_running_loop().call_later(0.5, server.proc.kill)
            with pytest.raises(assent.AssentNotRunning) as e:
                await a.wait(p.id, timeout=30)
            assert isinstance(e.value.__cause__, httpx.TransportError), "the cause is chained"

    asyncio.run(go())


def test_an_answer_the_sdk_cannot_read_is_an_assent_error(tmp_path, monkeypatch):
    # A server that proves itself, then answers what this SDK cannot read (another version's
    # shape, not JSON, a body that does not decode): AssentError with the reason as its cause,
    # never a bare pydantic, JSON or httpx error.
    key = bytes(range(32))
    bodies = iter([(b'{"id": "p_1"}', {}), (b"<html>", {}), (b"not gzip", {"content-encoding": "gzip"})] * 2
                  + [(b"data: {not json\n\n", {"content-type": "text/event-stream"})] * 2)

    def answer(h):
        if h.path.startswith("/v1/hello"):
            challenge = parse_qs(urlparse(h.path).query)["challenge"][0]
            proof = hmac.new(key, f"assent-server-proof\n{challenge}".encode(), hashlib.sha256).hexdigest()
            return send(h, json.dumps({"server": "assent", "proof": proof}).encode())
        body, headers = next(bodies)
        send(h, body, **headers)

    url, got, srv = listener(answer)
    (tmp_path / "server.json").write_text(json.dumps({"url": url, "proof_key": key.hex()}))
    (tmp_path / "agent.token").write_text("asnt_secret")
    monkeypatch.setenv("ASSENT_HOME", str(tmp_path))
    causes = []
    with Assent() as a:
        for call in [lambda: a.get("p_1"), lambda: a.wait("p_1", timeout=1), lambda: a.propose_tool("t", {})]:
            with pytest.raises(assent.AssentError) as e:
                call()
            causes.append(type(e.value.__cause__).__name__)
            assert type(e.value) is assent.AssentError and "this SDK can read" in str(e.value)

    async def go():
        async with AsyncAssent() as a:
            for call in [lambda: a.get("p_1"), lambda: a.wait("p_1", timeout=1), lambda: a.propose_tool("t", {})]:
                with pytest.raises(assent.AssentError) as e:
                    await call()
                causes.append(type(e.value.__cause__).__name__)
            with pytest.raises(assent.AssentError):
                async for _ in a.events():
                    pass

    asyncio.run(go())
    with Assent() as a, pytest.raises(assent.AssentError) as e:
        list(a.events())
    assert "not JSON" in str(e.value) and isinstance(e.value.__cause__, ValueError)
    srv.shutdown()
    assert causes == ["ValidationError", "JSONDecodeError", "DecodingError"] * 2
