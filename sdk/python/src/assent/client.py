"""The client: propose, read, wait for and withdraw proposals, and follow events. `Assent` is
synchronous and `AsyncAssent` asynchronous; both find Assent as its command line does and make
the server prove itself before sending a token."""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pydantic

from . import _discover
from urllib.parse import quote

from ._models import Proposal, ProposedBatch, SessionCounts
from .errors import AssentError, AssentNotRunning, Refused, Unauthorized

#: The longest the server holds one long-poll; `wait` asks again until it is settled.
SERVER_WAIT_CAP = 120


def _body(kind: str, payload: Any, **envelope: Any) -> dict:
    body = {"kind": kind, "payload": payload}
    body.update({k: v for k, v in envelope.items() if v is not None})
    return body


def _unreadable(request: str, e: Exception) -> AssentError:
    """The SDK's error for an answer to `request` it cannot read: not JSON, not the shape the API
    documents (a server of another version), or garbled on the way."""
    why = (str(e).splitlines() or [""])[0]
    return AssentError(f"Assent's answer to {request} is not one this SDK can read ({type(e).__name__}: {why})")


def _raise_for(res: httpx.Response, into: type[pydantic.BaseModel] | None = None) -> Any:
    """The JSON of a good answer (validated as `into`, when given); else the typed error its body
    names."""
    try:
        data = res.json()
    except ValueError as e:
        if res.is_success:
            raise _unreadable(f"{res.request.method} {res.request.url.path}", e) from e
        data = None
    if res.is_success:
        try:
            return into.model_validate(data) if into is not None else data
        except pydantic.ValidationError as e:
            raise _unreadable(f"{res.request.method} {res.request.url.path}", e) from e
    err = data.get("error", {}) if isinstance(data, dict) else {}
    code, message = err.get("code", f"http_{res.status_code}"), err.get("message", res.reason_phrase)
    if res.status_code in (401, 403):
        raise Unauthorized(code, message, res.status_code)
    raise Refused(code, message, res.status_code)


def _request(ep: _discover.Endpoint, method: str, path: str, json_body: Any, params: dict | None,
             headers: dict | None, timeout: float | None) -> dict:
    """The arguments of one authenticated request to `/v1{path}`."""
    return {
        "method": method, "url": f"{ep.url}/v1{path}", "json": json_body, "params": params,
        "headers": {"authorization": f"Bearer {ep.token}", **(headers or {})},
        "timeout": timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
    }


def _gone(ep: _discover.Endpoint, e: httpx.TransportError) -> AssentNotRunning:
    """The SDK's error for a request that got no answer: nothing listening (nothing was sent),
    or the server went away mid-request (it died, or the connection dropped during a wait)."""
    if isinstance(e, httpx.ConnectError):
        return AssentNotRunning(f"Assent is not running at {ep.url}")
    return AssentNotRunning(f"Assent at {ep.url} stopped answering ({type(e).__name__}: {e})")


def _event(line: str, data: list[str]) -> dict | None:
    """Feeds one line of an event stream; the event a blank line completes, if any."""
    if line == "":
        if data:
            try:
                event = json.loads("\n".join(data))
            except ValueError as e:
                raise AssentError(f"an event from Assent is not JSON ({e})") from e
            data.clear()
            return event
    elif line.startswith("data:"):
        data.append(line[5:].lstrip())
    return None


def _events(lines: Iterator[str]) -> Iterator[dict]:
    data: list[str] = []
    for line in lines:
        if (event := _event(line, data)) is not None:
            yield event


def _stream(ep: _discover.Endpoint) -> dict:
    """The arguments of the request that follows the agent's events."""
    return {"method": "GET", "url": f"{ep.url}/v1/events", "headers": {"authorization": f"Bearer {ep.token}"},
            "timeout": httpx.Timeout(30, read=None)}


def _idempotent(key: str | None) -> dict | None:
    return {"idempotency-key": key} if key else None


class _Waiting:
    """One `wait`'s clock: the long-poll each request asks for, and whether the time is up."""

    def __init__(self, proposal_id: str, timeout: float | None, poll: int):
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.proposal_id = proposal_id
        self.poll = poll

    def ask(self) -> dict:
        """The arguments of the next long-poll's `_call`."""
        left = SERVER_WAIT_CAP if self.deadline is None else self.deadline - time.monotonic()
        secs = max(0, min(self.poll, SERVER_WAIT_CAP, int(left)))
        return {"method": "GET", "path": f"/proposals/{self.proposal_id}", "params": {"wait": secs},
                "timeout": secs + 30, "into": Proposal}

    def over(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def pause(self) -> float:
        """Seconds to sleep before the next long-poll: what is left when it is under a second
        (the server waits whole seconds, so asking then would be a request at once, over and
        over), else nothing. At most one request follows it."""
        left = 0.0 if self.deadline is None else self.deadline - time.monotonic()
        return left if 0 < left < 1 else 0.0


class _Client:
    """What both clients share: where Assent is, proven once, and what becomes of a request that
    fails on the way. Their requests (`httpx.Client`'s or `httpx.AsyncClient`'s) are their own."""

    def __init__(self, url: str | None, token: str | None, home: str | os.PathLike | None):
        self._where = (url, token, home)
        self._ep: _discover.Endpoint | None = None

    def _hello(self) -> tuple[_discover.Endpoint, str, dict]:
        """Where Assent should be, a fresh challenge, and the arguments of the hello that asks
        the server to prove itself with it."""
        ep = _discover.discover(*self._where)
        ch = _discover.challenge()
        return ep, ch, {"url": f"{ep.url}/v1/hello", "params": {"challenge": ch}, "timeout": 5}

    def _proven(self, ep: _discover.Endpoint, ch: str, answer: Any) -> _discover.Endpoint:
        """The endpoint, once `answer` (the hello's JSON, None if there was none to read) proves it."""
        _discover.check_proof(ep, ch, answer)
        self._ep = ep
        return ep

    @staticmethod
    @contextmanager
    def _hello_failures(ep: _discover.Endpoint) -> Iterator[None]:
        """No answer to the hello is AssentNotRunning; an answer that cannot be read is left to
        check_proof, as no proof."""
        try:
            yield
        except httpx.TransportError as e:
            # No answer at all (a connection to a server that has since died included):
            # nothing to take for an impostor.
            raise _gone(ep, e) from e
        except (httpx.HTTPError, ValueError):
            pass

    @contextmanager
    def _failures(self, ep: _discover.Endpoint, request: str) -> Iterator[None]:
        """The SDK's errors for `request` failing on the way: no answer (Assent is found and
        proven again next time), or one that could not be read."""
        try:
            yield
        except httpx.TransportError as e:
            self._ep = None
            raise _gone(ep, e) from e
        except httpx.HTTPError as e:
            raise _unreadable(request, e) from e


class Assent(_Client):
    """A synchronous client for one agent.

    Arguments left out are found as the command line finds them: `url` from `ASSENT_URL` or the
    home's `server.json`, `token` from `ASSENT_TOKEN` or the home's `agent.token` (`home`:
    `ASSENT_HOME`, else the platform's data directory). The server proves itself with the key in
    its home's `server.json` (or `ASSENT_PROOF_KEY`) before the token is sent: a `url` without
    one raises NoProofKey."""

    def __init__(self, url: str | None = None, token: str | None = None, home: str | os.PathLike | None = None,
                 timeout: float = 30.0):
        super().__init__(url, token, home)
        self._http = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Assent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _endpoint(self) -> _discover.Endpoint:
        if self._ep is not None:
            return self._ep
        ep, ch, hello = self._hello()
        answer = None
        with self._hello_failures(ep):
            answer = self._http.get(**hello).json()
        return self._proven(ep, ch, answer)

    def _call(self, method: str, path: str, *, json_body: Any = None, params: dict | None = None,
              headers: dict | None = None, timeout: float | None = None,
              into: type[pydantic.BaseModel] | None = None) -> Any:
        ep = self._endpoint()
        with self._failures(ep, f"{method} /v1{path}"):
            res = self._http.request(**_request(ep, method, path, json_body, params, headers, timeout))
        return _raise_for(res, into)

    def propose(self, kind: str, payload: Any, *, title: str | None = None, summary: str | None = None,
                session_id: str | None = None, group_id: str | None = None, supersedes: str | None = None,
                expires_in: int | None = None, lease_secs: int | None = None, audience: str | None = None,
                idempotency_key: str | None = None) -> Proposal:
        """Files a proposal (it waits for a person, or a rule decides it at once)."""
        body = _body(kind, payload, title=title, summary=summary, session_id=session_id, group_id=group_id,
                     supersedes=supersedes, expires_in=expires_in, lease_secs=lease_secs, audience=audience)
        return self._call("POST", "/proposals", json_body=body, headers=_idempotent(idempotency_key), into=Proposal)

    def propose_tool(self, tool: str, input: Any, **envelope: Any) -> Proposal:
        """Files a `tool.call`: ask before running `tool` with `input`."""
        return self.propose("tool.call", {"tool": tool, "input": input}, **envelope)

    def propose_batch(self, items: list[dict], *, group_id: str | None = None,
                      idempotency_key: str | None = None) -> ProposedBatch:
        """Files several proposals at once, each on its own, in one group: per item the proposal
        or why it was refused."""
        body = {"items": items, **({"group_id": group_id} if group_id else {})}
        return self._call("POST", "/proposals/batch", json_body=body, headers=_idempotent(idempotency_key),
                          into=ProposedBatch)

    def session(self, session_id: str) -> SessionCounts:
        """This agent's proposals of session `session_id` by status (`pending`: still waiting)."""
        return self._call("GET", f"/sessions/{quote(session_id, safe='')}", into=SessionCounts)

    def get(self, proposal_id: str) -> Proposal:
        return self._call("GET", f"/proposals/{proposal_id}", into=Proposal)

    def withdraw(self, proposal_id: str) -> Proposal:
        """Withdraws a pending proposal (nobody will read its answer)."""
        return self._call("DELETE", f"/proposals/{proposal_id}", into=Proposal)

    def wait(self, proposal_id: str, timeout: float | None = None, *, withdraw_on_timeout: bool = False,
             poll: int = SERVER_WAIT_CAP) -> Proposal:
        """Waits until the proposal is settled or `timeout` seconds pass (none: until settled),
        asking again past the server's cap. Interrupted (Ctrl-C), or timed out with
        `withdraw_on_timeout`, it withdraws the proposal. The proposal as last seen."""
        waiting = _Waiting(proposal_id, timeout, poll)
        try:
            while not (p := self._call(**waiting.ask())).settled:
                if waiting.over():
                    return self._withdrawn_or_settled(proposal_id) if withdraw_on_timeout else p
                time.sleep(waiting.pause())
            return p
        except KeyboardInterrupt:
            self._withdrawn_or_settled(proposal_id)
            raise

    def _withdrawn_or_settled(self, proposal_id: str) -> Proposal:
        try:
            return self.withdraw(proposal_id)
        except Refused:
            # Decided meanwhile: that answer stands.
            return self.get(proposal_id)

    def events(self) -> Iterator[dict]:
        """The agent's events as they happen (`GET /v1/events`): each a dict with `type`."""
        ep = self._endpoint()
        with self._failures(ep, "GET /v1/events"), self._http.stream(**_stream(ep)) as res:
            if not res.is_success:
                res.read()
                _raise_for(res)
            yield from _events(res.iter_lines())

    def keys(self) -> dict:
        """The public keys that sign decisions' receipts (a JWK Set), from the proven server."""
        return self._call("GET", "/keys")


class AsyncAssent(_Client):
    """The asynchronous client: the same calls as `Assent`, awaited. Cancelling a `wait`
    withdraws the proposal."""

    def __init__(self, url: str | None = None, token: str | None = None, home: str | os.PathLike | None = None,
                 timeout: float = 30.0):
        super().__init__(url, token, home)
        self._http = httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncAssent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _endpoint(self) -> _discover.Endpoint:
        if self._ep is not None:
            return self._ep
        ep, ch, hello = self._hello()
        answer = None
        with self._hello_failures(ep):
            answer = (await self._http.get(**hello)).json()
        return self._proven(ep, ch, answer)

    async def _call(self, method: str, path: str, *, json_body: Any = None, params: dict | None = None,
                    headers: dict | None = None, timeout: float | None = None,
                    into: type[pydantic.BaseModel] | None = None) -> Any:
        ep = await self._endpoint()
        with self._failures(ep, f"{method} /v1{path}"):
            res = await self._http.request(**_request(ep, method, path, json_body, params, headers, timeout))
        return _raise_for(res, into)

    async def propose(self, kind: str, payload: Any, *, title: str | None = None, summary: str | None = None,
                      session_id: str | None = None, group_id: str | None = None, supersedes: str | None = None,
                      expires_in: int | None = None, lease_secs: int | None = None, audience: str | None = None,
                      idempotency_key: str | None = None) -> Proposal:
        body = _body(kind, payload, title=title, summary=summary, session_id=session_id, group_id=group_id,
                     supersedes=supersedes, expires_in=expires_in, lease_secs=lease_secs, audience=audience)
        return await self._call("POST", "/proposals", json_body=body, headers=_idempotent(idempotency_key),
                                into=Proposal)

    async def propose_tool(self, tool: str, input: Any, **envelope: Any) -> Proposal:
        return await self.propose("tool.call", {"tool": tool, "input": input}, **envelope)

    async def propose_batch(self, items: list[dict], *, group_id: str | None = None,
                            idempotency_key: str | None = None) -> ProposedBatch:
        body = {"items": items, **({"group_id": group_id} if group_id else {})}
        return await self._call("POST", "/proposals/batch", json_body=body, headers=_idempotent(idempotency_key),
                                into=ProposedBatch)

    async def session(self, session_id: str) -> SessionCounts:
        return await self._call("GET", f"/sessions/{quote(session_id, safe='')}", into=SessionCounts)

    async def get(self, proposal_id: str) -> Proposal:
        return await self._call("GET", f"/proposals/{proposal_id}", into=Proposal)

    async def withdraw(self, proposal_id: str) -> Proposal:
        return await self._call("DELETE", f"/proposals/{proposal_id}", into=Proposal)

    async def wait(self, proposal_id: str, timeout: float | None = None, *, withdraw_on_timeout: bool = False,
                   poll: int = SERVER_WAIT_CAP) -> Proposal:
        import asyncio

        waiting = _Waiting(proposal_id, timeout, poll)
        try:
            while not (p := await self._call(**waiting.ask())).settled:
                if waiting.over():
                    return await self._withdrawn_or_settled(proposal_id) if withdraw_on_timeout else p
                await asyncio.sleep(waiting.pause())
            return p
        except asyncio.CancelledError:
            await asyncio.shield(self._withdrawn_or_settled(proposal_id))
            raise

    async def _withdrawn_or_settled(self, proposal_id: str) -> Proposal:
        try:
            return await self.withdraw(proposal_id)
        except Refused:
            return await self.get(proposal_id)

    async def events(self) -> AsyncIterator[dict]:
        ep = await self._endpoint()
        with self._failures(ep, "GET /v1/events"):
            async with self._http.stream(**_stream(ep)) as res:
                if not res.is_success:
                    await res.aread()
                    _raise_for(res)
                data: list[str] = []
                async for line in res.aiter_lines():
                    if (event := _event(line, data)) is not None:
                        yield event

    async def keys(self) -> dict:
        return await self._call("GET", "/keys")
