"""What the adapters share: idempotency keys scoped to one run, comparing arguments as JSON, and
waiting on every proposal of a turn at once."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from collections.abc import Awaitable, Callable

from ..client import Assent, AsyncAssent
from ..errors import AssentError, NotApproved, Refused
from ..gated import outcome

#: The longest Idempotency-Key the server takes.
KEY_MAX = 200


def new_run_key() -> str:
    """A fresh random key for one run. Idempotency keys are kept per agent for good, and models
    (local model servers above all) reuse tool-call ids such as `call_0` from run to run: a key
    made of the id alone would hand a new run an earlier run's decision."""
    return secrets.token_hex(8)


def call_key(framework: str, run_key: str, call_id: str | None) -> str | None:
    """The Idempotency-Key of one tool call of a run: a retry of it within the run gets the same
    proposal, another run never does. An id that could not go in a header as it is (too long,
    not visible ASCII) goes in as its SHA-256, so two ids never share a key."""
    if not call_id:
        return None
    key = f"{framework}:{run_key}:{call_id}"
    if len(key) <= KEY_MAX and all("!" <= ch <= "~" for ch in key):
        return key
    return f"{framework}:{run_key}:sha256:{hashlib.sha256(call_id.encode()).hexdigest()}"


class CallKeys:
    """The idempotency keys of an adapter asked call by call (a framework's permission
    callback): a random key of its own, and the tool-call id. A call asked again before it got
    an answer (a retry) gets the same proposal; once answered, the same id is a new call (a
    model that numbers its calls afresh each turn) and gets a new proposal."""

    def __init__(self, framework: str):
        self.framework, self.run, self.answered = framework, new_run_key(), Counter[str]()

    def key(self, call_id: str | None) -> str | None:
        if not call_id:
            return None
        n = self.answered[call_id]
        return call_key(self.framework, f"{self.run}.{n}" if n else self.run, call_id)

    def done(self, call_id: str | None) -> None:
        """`call_id` got its answer: the next call with this id is another call."""
        if call_id:
            self.answered[call_id] += 1


def filled(args: Any, schema: dict | None) -> Any:
    """`args` with each argument the tool's JSON schema gives a default and the model left out
    filled in with it: the call as the tool will run it, which is what the person is shown."""
    props = (schema or {}).get("properties")
    if not isinstance(args, dict) or not isinstance(props, dict):
        return args
    out = dict(args)
    for name, prop in props.items():
        if name not in out and isinstance(prop, dict) and "default" in prop:
            out[name] = prop["default"]
    return out


def left_out(approved: dict, schema: dict | None) -> list[str]:
    """The arguments with a default that an approved input leaves out: run with it, the tool
    would take a default the person was not shown approved (they deleted it)."""
    props = (schema or {}).get("properties")
    if not isinstance(props, dict):
        return []
    return [n for n, p in props.items() if isinstance(p, dict) and "default" in p and n not in approved]


def unfit(names: list[str]) -> str:
    """What the model reads of an approved input that leaves out arguments with defaults."""
    return (f"The person approved this only without {', '.join(f'`{n}`' for n in names)}, which the tool would "
            "have filled in with its default: it did not run (call it again with every argument it needs)")


def same_args(a: Any, b: Any) -> bool:
    """Whether two sets of arguments are the same JSON. Python's `==` takes `True` for `1` and
    `1.0`; a person who changed one into the other approved something else."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class NotFiled:
    """A call of a turn that Assent refused to file (`Refused`: an argument it does not take, such
    as an integer beyond 2^53-1): it is told to the model as a denial, with Assent's reason, and
    the turn's other calls go on to the person as usual (a refusal used to end the whole run,
    leaving the calls filed before it waiting for a decision that could never run them)."""

    def __init__(self, error: Refused):
        self.error = error


def file_one(propose: Callable[[], Any]) -> Any:
    """The proposal `propose` files, or NotFiled when Assent refuses it."""
    try:
        return propose()
    except Refused as e:
        return NotFiled(e)


async def afile_one(proposing: Awaitable[Any]) -> Any:
    """`file_one`, awaited."""
    try:
        return await proposing
    except Refused as e:
        return NotFiled(e)


def approved(p: Any) -> Any:
    """What `p` approved to run (the person's edit included), as `outcome`; a call that was not
    filed raises NotApproved with Assent's reason, as a rejection does."""
    if isinstance(p, NotFiled):
        raise NotApproved("", f"Assent refused this call ({p.error.code}): {p.error.message}. It did not run")
    return outcome(p)


def _merged(filed: list[Any], done: list[Any]) -> list[Any]:
    """`filed` with each proposal replaced by its settled self from `done` (in order)."""
    settled = iter(done)
    return [f if isinstance(f, NotFiled) else next(settled) for f in filed]


def wait_filed(client: Assent, filed: list[Any], timeout: float | None) -> list[Any]:
    """`wait_all` over the calls of a turn that were filed; the others stay NotFiled."""
    return _merged(filed, wait_all(client, [f.id for f in filed if not isinstance(f, NotFiled)], timeout))


async def await_filed(client: AsyncAssent, filed: list[Any], timeout: float | None) -> list[Any]:
    """`wait_filed`, awaited."""
    return _merged(filed, await await_all(client, [f.id for f in filed if not isinstance(f, NotFiled)], timeout))


def _withdraw_pending(client: Assent, ids: list[str]) -> None:
    for i in ids:
        try:
            client.withdraw(i)
        except AssentError:
            pass  # decided meanwhile (its answer stands), or Assent is gone


def wait_all(client: Assent, ids: list[str], timeout: float | None) -> list[Any]:
    """Waits on every proposal at once (one thread each), each settled proposal in the order of
    `ids`. Each open wait holds its proposal's lease: the server withdraws a leased proposal
    nobody waits on, so waiting on one while the others of the turn sit unwatched would lose
    them after the lease. Should waiting fail or be interrupted, those still pending are
    withdrawn (so the other waits end too) before the error goes on."""
    if len(ids) <= 1:
        return [client.wait(i, timeout, withdraw_on_timeout=True) for i in ids]
    with ThreadPoolExecutor(max_workers=len(ids), thread_name_prefix="assent-wait") as pool:
        futures = [pool.submit(client.wait, i, timeout, withdraw_on_timeout=True) for i in ids]
        try:
            return [f.result() for f in futures]
        except BaseException:
            _withdraw_pending(client, ids)
            raise


async def await_all(client: AsyncAssent, ids: list[str], timeout: float | None) -> list[Any]:
    """`wait_all`, awaited: the waits run together; should one fail (or this be cancelled), the
    others are cancelled, which withdraws their proposals."""
    tasks = [asyncio.ensure_future(client.wait(i, timeout, withdraw_on_timeout=True)) for i in ids]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
