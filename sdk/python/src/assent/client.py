"""The client: propose, read, wait for and withdraw proposals, and follow events. `Assent` is
synchronous and `AsyncAssent` asynchronous; both find Assent as its command line does and make
the server prove itself before sending a token."""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Iterator
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


class Assent:
    """A synchronous client for one agent.

    Arguments left out are found as the command line finds them: `url` from `ASSENT_URL` or the
    home's `server.json`, `token` from `ASSENT_TOKEN` or the home's `agent.token` (`home`:
    `ASSENT_HOME`, else the platform's data directory). The server proves itself with the key in
    its home's `server.json` (or `ASSENT_PROOF_KEY`) before the token is sent: a `url` without
    one raises NoProofKey."""

    def __init__(self, url: str | None = None, token: str | None = None, home: str | os.PathLike | None = None,
                 timeout: float = 30.0):
        self._where = (url, token, home)
        self._ep: _discover.Endpoint | None = None
        self._http = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Assent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _endpoint(self) -> _discover.Endpoint:
        if self._ep is None:
            ep = _discover.discover(*self._where)
            ch = _discover.challenge()
            try:
                res = self._http.get(f"{ep.url}/v1/hello", params={"challenge": ch}, timeout=5)
                answer = res.json()
            except httpx.TransportError as e:
                # No answer at all (a connection to a server that has since died included):
                # nothing to take for an impostor.
                raise _gone(ep, e) from e
            except (httpx.HTTPError, ValueError):
                answer = None
            _discover.check_proof(ep, ch, answer)
            self._ep = ep
        return self._ep

    def _call(self, method: str, path: str, *, json_body: Any = None, params: dict | None = None,
              headers: dict | None = None, timeout: float | None = None,
              into: type[pydantic.BaseModel] | None = None) -> Any:
        ep = self._endpoint()
        try:
            res = self._http.request(**_request(ep, method, path, json_body, params, headers, timeout))
        except httpx.TransportError as e:
            self._ep = None
            raise _gone(ep, e) from e
        except httpx.HTTPError as e:
            raise _unreadable(f"{method} /v1{path}", e) from e
        return _raise_for(res, into)

    def propose(self, kind: str, payload: Any, *, title: str | None = None, summary: str | None = None,
                session_id: str | None = None, group_id: str | None = None, supersedes: str | None = None,
                expires_in: int | None = None, lease_secs: int | None = None, audience: str | None = None,
                idempotency_key: str | None = None) -> Proposal:
        """Files a proposal (it waits for a person, or a rule decides it at once)."""
        body = _body(kind, payload, title=title, summary=summary, session_id=session_id, group_id=group_id,
                     supersedes=supersedes, expires_in=expires_in, lease_secs=lease_secs, audience=audience)
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        return self._call("POST", "/proposals", json_body=body, headers=headers, into=Proposal)

    def propose_tool(self, tool: str, input: Any, **envelope: Any) -> Proposal:
        """Files a `tool.call`: ask before running `tool` with `input`."""
        return self.propose("tool.call", {"tool": tool, "input": input}, **envelope)

    def propose_batch(self, items: list[dict], *, group_id: str | None = None,
                      idempotency_key: str | None = None) -> ProposedBatch:
        """Files several proposals at once, each on its own, in one group: per item the proposal
        or why it was refused."""
        body = {"items": items, **({"group_id": group_id} if group_id else {})}
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        return self._call("POST", "/proposals/batch", json_body=body, headers=headers, into=ProposedBatch)

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
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                left = SERVER_WAIT_CAP if deadline is None else deadline - time.monotonic()
                secs = max(0, min(poll, SERVER_WAIT_CAP, int(left)))
                p = self._call("GET", f"/proposals/{proposal_id}", params={"wait": secs}, timeout=secs + 30,
                               into=Proposal)
                if p.settled:
                    return p
                if deadline is not None and time.monotonic() >= deadline:
                    if withdraw_on_timeout:
                        return self._withdrawn_or_settled(proposal_id)
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
        try:
            with self._http.stream("GET", f"{ep.url}/v1/events", headers={"authorization": f"Bearer {ep.token}"},
                                   timeout=httpx.Timeout(30, read=None)) as res:
                if not res.is_success:
                    res.read()
                    _raise_for(res)
                yield from _events(res.iter_lines())
        except httpx.TransportError as e:
            self._ep = None
            raise _gone(ep, e) from e
        except httpx.HTTPError as e:
            raise _unreadable("GET /v1/events", e) from e

    def keys(self) -> dict:
        """The public keys that sign decisions' receipts (a JWK Set), from the proven server."""
        return self._call("GET", "/keys")


class AsyncAssent:
    """The asynchronous client: the same calls as `Assent`, awaited. Cancelling a `wait`
    withdraws the proposal."""

    def __init__(self, url: str | None = None, token: str | None = None, home: str | os.PathLike | None = None,
                 timeout: float = 30.0):
        self._where = (url, token, home)
        self._ep: _discover.Endpoint | None = None
        self._http = httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncAssent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _endpoint(self) -> _discover.Endpoint:
        if self._ep is None:
            ep = _discover.discover(*self._where)
            ch = _discover.challenge()
            try:
                res = await self._http.get(f"{ep.url}/v1/hello", params={"challenge": ch}, timeout=5)
                answer = res.json()
            except httpx.TransportError as e:
                # No answer at all (a connection to a server that has since died included):
                # nothing to take for an impostor.
                raise _gone(ep, e) from e
            except (httpx.HTTPError, ValueError):
                answer = None
            _discover.check_proof(ep, ch, answer)
            self._ep = ep
        return self._ep

    async def _call(self, method: str, path: str, *, json_body: Any = None, params: dict | None = None,
                    headers: dict | None = None, timeout: float | None = None,
                    into: type[pydantic.BaseModel] | None = None) -> Any:
        ep = await self._endpoint()
        try:
            res = await self._http.request(**_request(ep, method, path, json_body, params, headers, timeout))
        except httpx.TransportError as e:
            self._ep = None
            raise _gone(ep, e) from e
        except httpx.HTTPError as e:
            raise _unreadable(f"{method} /v1{path}", e) from e
        return _raise_for(res, into)

    async def propose(self, kind: str, payload: Any, *, title: str | None = None, summary: str | None = None,
                      session_id: str | None = None, group_id: str | None = None, supersedes: str | None = None,
                      expires_in: int | None = None, lease_secs: int | None = None, audience: str | None = None,
                      idempotency_key: str | None = None) -> Proposal:
        body = _body(kind, payload, title=title, summary=summary, session_id=session_id, group_id=group_id,
                     supersedes=supersedes, expires_in=expires_in, lease_secs=lease_secs, audience=audience)
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        return await self._call("POST", "/proposals", json_body=body, headers=headers, into=Proposal)

    async def propose_tool(self, tool: str, input: Any, **envelope: Any) -> Proposal:
        return await self.propose("tool.call", {"tool": tool, "input": input}, **envelope)

    async def propose_batch(self, items: list[dict], *, group_id: str | None = None,
                            idempotency_key: str | None = None) -> ProposedBatch:
        body = {"items": items, **({"group_id": group_id} if group_id else {})}
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        return await self._call("POST", "/proposals/batch", json_body=body, headers=headers, into=ProposedBatch)

    async def session(self, session_id: str) -> SessionCounts:
        return await self._call("GET", f"/sessions/{quote(session_id, safe='')}", into=SessionCounts)

    async def get(self, proposal_id: str) -> Proposal:
        return await self._call("GET", f"/proposals/{proposal_id}", into=Proposal)

    async def withdraw(self, proposal_id: str) -> Proposal:
        return await self._call("DELETE", f"/proposals/{proposal_id}", into=Proposal)

    async def wait(self, proposal_id: str, timeout: float | None = None, *, withdraw_on_timeout: bool = False,
                   poll: int = SERVER_WAIT_CAP) -> Proposal:
        import asyncio

        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                left = SERVER_WAIT_CAP if deadline is None else deadline - time.monotonic()
                secs = max(0, min(poll, SERVER_WAIT_CAP, int(left)))
                p = await self._call("GET", f"/proposals/{proposal_id}", params={"wait": secs}, timeout=secs + 30,
                                     into=Proposal)
                if p.settled:
                    return p
                if deadline is not None and time.monotonic() >= deadline:
                    if withdraw_on_timeout:
                        return await self._withdrawn_or_settled(proposal_id)
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
        try:
            async with self._http.stream("GET", f"{ep.url}/v1/events",
                                         headers={"authorization": f"Bearer {ep.token}"},
                                         timeout=httpx.Timeout(30, read=None)) as res:
                if not res.is_success:
                    await res.aread()
                    _raise_for(res)
                data: list[str] = []
                async for line in res.aiter_lines():
                    if (event := _event(line, data)) is not None:
                        yield event
        except httpx.TransportError as e:
            self._ep = None
            raise _gone(ep, e) from e
        except httpx.HTTPError as e:
            raise _unreadable("GET /v1/events", e) from e

    async def keys(self) -> dict:
        return await self._call("GET", "/keys")
