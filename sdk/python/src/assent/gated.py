"""`gated`: a function (or any agent's tool) that runs only once a person approves the call in
Assent, with the arguments they approved."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, Literal, ParamSpec, TypeVar, overload

from ._models import Proposal
from .client import Assent, AsyncAssent
from .errors import Expired, Failed, Refined, Rejected, Withdrawn

P = ParamSpec("P")
R = TypeVar("R")


def outcome(p: Proposal) -> Any:
    """The approved input of a settled `tool.call` proposal; otherwise the NotApproved that says
    why it must not run (Rejected with the reason, Refined with the feedback, Expired,
    Withdrawn, Failed)."""
    status = p.status.value if hasattr(p.status, "value") else str(p.status)
    d = p.decision
    if status in ("approved", "applying", "applied"):
        approved = p.approved_payload if p.approved_payload is not None else p.payload
        return approved.get("input") if isinstance(approved, dict) else None
    if status == "rejected":
        raise Rejected(p.id, d.reason if d else None)
    if status == "refined":
        raise Refined(p.id, d.feedback if d else None)
    if status == "withdrawn":
        raise Withdrawn(p.id, "withdrawn before anyone decided")
    if status == "failed":
        raise Failed(p.id, p.error.code if p.error else "failed", p.error.message if p.error else "")
    raise Expired(p.id, "nobody decided in time")


def _arguments(fn: Callable, args: tuple, kwargs: dict) -> dict:
    sig = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    out = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            out[name] = list(value)
        else:
            out[name] = value
    return out


def _call_with(fn: Callable, proposal_id: str, approved: Any) -> tuple[tuple, dict]:
    """The call of `fn` with exactly the approved arguments, by name (`*args` as a list): none
    left out and none added. The person saw every argument, defaults included, so one they
    deleted must not come back as the function's default, and one they added must not be
    dropped; either way the arguments do not fit and `fn` does not run (Failed)."""

    def unfit(why: str) -> Failed:
        return Failed(proposal_id, "arguments_unfit", f"{why}; {getattr(fn, '__name__', 'the function')} did not run")

    if not isinstance(approved, dict):
        raise unfit(f"the approved input {json.dumps(approved)} is not arguments by name")
    params = inspect.signature(fn).parameters
    kinds = {p.kind for p in params.values()}
    named = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    extra = {k: v for k, v in approved.items() if k not in named}
    if extra and inspect.Parameter.VAR_KEYWORD not in kinds:
        raise unfit(f"the approved arguments add `{next(iter(extra))}`, which it does not take")
    # Before a `*args`, arguments go by position (by name they would clash with it).
    by_position = {inspect.Parameter.POSITIONAL_ONLY}
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        by_position.add(inspect.Parameter.POSITIONAL_OR_KEYWORD)
    args: list = []
    kwargs: dict = {}
    for name, p in params.items():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update(extra)
        elif name not in approved:
            raise unfit(f"the approved arguments leave out `{name}`")
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            if not isinstance(approved[name], list):
                raise unfit(f"the approved `{name}` is not a list")
            args.extend(approved[name])
        elif p.kind in by_position:
            args.append(approved[name])
        else:
            kwargs[name] = approved[name]
    return tuple(args), kwargs


def _result(p: Proposal) -> Any:
    """What Assent's carrying out of an approved write gave, or why it must not be used."""
    outcome(p)  # raises unless approved
    if p.status.value == "failed" and p.error is not None:
        raise Failed(p.id, p.error.code, p.error.message)
    return p.result


def _applied(f: Callable, kind: str, client: Any, timeout: float | None, audience: str | None,
             session_id: str | None, preview: Callable[..., str] | None) -> Any:
    """`f` builds a payload of `kind`; calling it files that and returns Assent's result."""

    def envelope(args: tuple, kwargs: dict) -> dict:
        extra = {"audience": audience, "session_id": session_id, "lease_secs": 15}
        if preview is not None:
            extra["title"] = str(preview(*args, **kwargs))[:200]
        return extra

    if inspect.iscoroutinefunction(f):

        @functools.wraps(f)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            c = client if isinstance(client, AsyncAssent) else AsyncAssent()
            p = await c.propose(kind, await f(*args, **kwargs), **envelope(args, kwargs))
            return _result(await c.wait(p.id, timeout, withdraw_on_timeout=True))

        return run_async

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        c = client if isinstance(client, Assent) else Assent()
        p = c.propose(kind, f(*args, **kwargs), **envelope(args, kwargs))
        return _result(c.wait(p.id, timeout, withdraw_on_timeout=True))

    return run


# The types of `gated`: a `tool.call` gate returns what the function returns (awaited, for an
# `async def`), taking the same arguments; a function that builds a write of another kind returns
# Assent's result of carrying it out instead, which is JSON (Any).
@overload
def gated(fn: Callable[P, R], *, tool: str | None = ..., preview: Callable[..., str] | None = ...,
          client: Assent | AsyncAssent | None = ..., timeout: float | None = ..., audience: str | None = ...,
          receipt: bool = ..., requires_approval: bool = ..., session_id: str | None = ...,
          kind: Literal["tool.call"] = ...) -> Callable[P, R]: ...
@overload
def gated(fn: None = None, *, tool: str | None = ..., preview: Callable[..., str] | None = ...,
          client: Assent | AsyncAssent | None = ..., timeout: float | None = ..., audience: str | None = ...,
          receipt: bool = ..., requires_approval: bool = ..., session_id: str | None = ...,
          kind: Literal["tool.call"] = ...) -> Callable[[Callable[P, R]], Callable[P, R]]: ...
@overload
def gated(fn: Callable[P, Any], *, tool: str | None = ..., preview: Callable[..., str] | None = ...,
          client: Assent | AsyncAssent | None = ..., timeout: float | None = ..., audience: str | None = ...,
          receipt: bool = ..., requires_approval: bool = ..., session_id: str | None = ...,
          kind: str) -> Callable[P, Any]: ...
@overload
def gated(fn: None = None, *, tool: str | None = ..., preview: Callable[..., str] | None = ...,
          client: Assent | AsyncAssent | None = ..., timeout: float | None = ..., audience: str | None = ...,
          receipt: bool = ..., requires_approval: bool = ..., session_id: str | None = ...,
          kind: str) -> Callable[[Callable[P, Any]], Callable[P, Any]]: ...
def gated(fn: Callable[..., Any] | None = None, *, tool: str | None = None,
          preview: Callable[..., str] | None = None, client: Assent | AsyncAssent | None = None,
          timeout: float | None = 3600, audience: str | None = None, receipt: bool = False,
          requires_approval: bool = True, session_id: str | None = None, kind: str = "tool.call") -> Any:
    """Makes `fn` ask a person first. Calling it files a `tool.call` proposal (the tool is
    `tool`, else the function's name; the input its arguments by name), shows `preview(...)`'s
    text as the agent's title when given, and waits. Approved, `fn` runs with exactly the
    arguments the person approved: their edited input whole when they edited it, never merged
    with the proposed one. The proposal shows every argument, defaults included, so approved
    arguments that leave one out (it would come back as its default) or add one `fn` does not
    take raise Failed (`arguments_unfit`) and `fn` does not run. Otherwise it raises Rejected
    (with the reason), Refined (with the feedback), Expired (Assent's expiry, `expires_in`,
    passed) or Withdrawn, and `fn` does not run. A wait past `timeout` seconds withdraws the
    proposal and raises Withdrawn, as it is then in Assent.

    `receipt=True` also checks the decision's signed receipt (`assent[receipts]`) against the
    arguments about to be used before running. `requires_approval=False` runs `fn` directly,
    said explicitly per tool. Async functions are waited on without blocking.

    With `kind="file.write"`, `"file.delete"` or `"http.request"`, the function builds the
    payload and Assent carries it out: calling it files what it returns as that kind (Assent
    computes the diff or the request the person sees), and once approved Assent applies it
    itself (an HTTP call with its credential from the keychain) and the call returns Assent's
    result of it; Failed when applying it failed."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        name = tool or f.__name__
        if not requires_approval:
            return f
        if kind != "tool.call":
            return _applied(f, kind, client, timeout, audience, session_id, preview)

        def envelope(args: tuple, kwargs: dict) -> tuple[dict, dict]:
            values = _arguments(f, args, kwargs)
            extra = {"audience": audience, "session_id": session_id, "lease_secs": 15}
            if preview is not None:
                extra["title"] = str(preview(*args, **kwargs))[:200]
            return values, extra

        def check(c: Any, p: Proposal, approved: dict) -> None:
            if receipt:
                from .receipts import verify_receipt

                token = p.decision.receipt if p.decision else None
                verify_receipt(token or "", c, tool=name, input=approved, audience=audience)

        if inspect.iscoroutinefunction(f):

            @functools.wraps(f)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                c = client if isinstance(client, AsyncAssent) else AsyncAssent()
                values, extra = envelope(args, kwargs)
                p = await c.propose_tool(name, values, **extra)
                p = await c.wait(p.id, timeout, withdraw_on_timeout=True)
                approved = outcome(p)
                check(await c.keys() if receipt else None, p, approved)
                a, k = _call_with(f, p.id, approved)
                return await f(*a, **k)

            return run_async

        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            c = client if isinstance(client, Assent) else Assent()
            values, extra = envelope(args, kwargs)
            p = c.propose_tool(name, values, **extra)
            p = c.wait(p.id, timeout, withdraw_on_timeout=True)
            approved = outcome(p)
            check(c.keys() if receipt else None, p, approved)
            a, k = _call_with(f, p.id, approved)
            return f(*a, **k)

        return run

    return wrap(fn) if fn is not None else wrap
