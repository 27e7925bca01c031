"""Pydantic AI: Assent settles a run's deferred tool approvals.

A tool declared with `requires_approval=True` ends the run with `DeferredToolRequests` (the
agent's `output_type` includes it). `settle` files each call as a `tool.call` proposal (all of
them first, so the person sees them together), waits on them all at once (an open wait keeps a
proposal's lease, so none is withdrawn while the person decides another), and answers with
`DeferredToolResults`: approved as asked (`True`), approved with the person's edited arguments
whole (`ToolApproved(override_args=...)`), or denied with what the model should read
(`ToolDenied`: the reason, the requested changes, or that nobody decided in time, the proposal
then withdrawn). `run_sync` / `run` drive a whole run,
settling every round of approvals until the agent answers. A proposal's idempotency key is its
tool-call id under a random key made for each round: a model that reuses ids such as `call_0`
(as local model servers do) files new proposals, never getting an earlier decision.

    from pydantic_ai import Agent, DeferredToolRequests
    from assent.adapters.pydantic_ai import run_sync

    agent = Agent(model, output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_post(post_id: int) -> str: ...

    result = run_sync(agent, "tidy the blog")
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from ..client import Assent, AsyncAssent
from ..errors import NotApproved
from ._common import (afile_one, approved, await_filed, call_key, file_one, filled, left_out, new_run_key, same_args,
                      unfit, wait_filed)


def _answer(p: Any, call: Any, schema: dict | None) -> Any:
    try:
        ok = approved(p)
    except NotApproved as e:
        return ToolDenied(str(e))
    if not isinstance(ok, dict):
        return ToolDenied(f"The person approved this only with the input {json.dumps(ok)}, which is not "
                          "arguments for this tool: it did not run")
    if missing := left_out(ok, schema):
        return ToolDenied(unfit(missing))
    if same_args(ok, call.args_as_dict()):
        return True
    # The person's input whole (the defaults they were shown included): Pydantic AI runs the call
    # with these arguments and no others.
    return ToolApproved(override_args=ok)


def schemas(agent: Any) -> dict[str, dict]:
    """The JSON schema of each of `agent`'s function tools, by name: where their defaults are."""
    out: dict[str, dict] = {}
    for toolset in getattr(agent, "toolsets", None) or []:
        for name, tool in (getattr(toolset, "tools", None) or {}).items():
            schema = getattr(getattr(tool, "tool_def", None), "parameters_json_schema", None)
            if isinstance(schema, dict):
                out[name] = schema
    return out


def _envelope(call: Any, run_key: str, session_id: str | None, audience: str | None) -> dict:
    return {"session_id": session_id, "audience": audience, "lease_secs": 15,
            "idempotency_key": call_key("pydantic-ai", run_key, call.tool_call_id)}


def _asked(requests: DeferredToolRequests, tools: dict[str, dict]) -> Iterator[tuple[Any, dict]]:
    """Each call awaiting approval, with its arguments as the tool will run them: the model's,
    and the defaults of those it left out (shown to the person, so none runs unseen)."""
    return ((call, filled(call.args_as_dict(), tools.get(call.tool_name))) for call in requests.approvals)


def _results(filed: list[tuple[Any, dict, Any]], done: list[Any], tools: dict[str, dict]) -> DeferredToolResults:
    """The answers to the calls `filed` (each with its arguments and its proposal), from the
    proposals settled (`done`, in the same order)."""
    results = DeferredToolResults()
    for (call, _, _), p in zip(filed, done):
        results.approvals[call.tool_call_id] = _answer(p, call, tools.get(call.tool_name))
    return results


def settle(requests: DeferredToolRequests, client: Assent | None = None, *, timeout: float = 3600,
           session_id: str | None = None, audience: str | None = None,
           run_key: str | None = None, tools: dict[str, dict] | None = None) -> DeferredToolResults:
    """The person's answers (through Assent) to every approval `requests` holds, all of them
    waited on at once. `run_key` scopes the idempotency keys: settling the same requests again
    with the same `run_key` (a retry) files nothing twice, while another run never gets an
    earlier run's decision; left out, each call of `settle` is a run of its own (as each round of
    `run_sync` is). `tools` (`schemas(agent)`) are the tools' JSON schemas: the defaults of the
    arguments a model left out are filled in and shown, and an approval that leaves one out is
    refused as unfit, never run with a default the person did not see."""
    c = client or Assent()
    run_key = run_key or new_run_key()
    tools = tools or {}
    filed = [(call, asked, file_one(lambda: c.propose_tool(call.tool_name, asked,
                                                           **_envelope(call, run_key, session_id, audience))))
             for call, asked in _asked(requests, tools)]
    return _results(filed, wait_filed(c, [p for _, _, p in filed], timeout), tools)


async def asettle(requests: DeferredToolRequests, client: AsyncAssent | None = None, *, timeout: float = 3600,
                  session_id: str | None = None, audience: str | None = None,
                  run_key: str | None = None, tools: dict[str, dict] | None = None) -> DeferredToolResults:
    """`settle`, awaited."""
    c = client or AsyncAssent()
    run_key = run_key or new_run_key()
    tools = tools or {}
    filed = [(call, asked, await afile_one(c.propose_tool(call.tool_name, asked,
                                                          **_envelope(call, run_key, session_id, audience))))
             for call, asked in _asked(requests, tools)]
    return _results(filed, await await_filed(c, [p for _, _, p in filed], timeout), tools)


def run_sync(agent: Any, prompt: str | None = None, *, client: Assent | None = None, timeout: float = 3600,
             session_id: str | None = None, audience: str | None = None, **kwargs: Any) -> Any:
    """Runs `agent` to its answer, settling each round of approvals through Assent."""
    result = agent.run_sync(prompt, **kwargs)
    while isinstance(result.output, DeferredToolRequests):
        answers = settle(result.output, client, timeout=timeout, session_id=session_id, audience=audience,
                         tools=schemas(agent))
        result = agent.run_sync(message_history=result.all_messages(), deferred_tool_results=answers,
                                **{k: v for k, v in kwargs.items() if k != "message_history"})
    return result


async def run(agent: Any, prompt: str | None = None, *, client: AsyncAssent | None = None, timeout: float = 3600,
              session_id: str | None = None, audience: str | None = None, **kwargs: Any) -> Any:
    """`run_sync`, awaited."""
    result = await agent.run(prompt, **kwargs)
    while isinstance(result.output, DeferredToolRequests):
        answers = await asettle(result.output, client, timeout=timeout, session_id=session_id, audience=audience,
                                tools=schemas(agent))
        result = await agent.run(message_history=result.all_messages(), deferred_tool_results=answers,
                                 **{k: v for k, v in kwargs.items() if k != "message_history"})
    return result
