"""Pydantic AI: Assent settles a run's deferred tool approvals.

A tool declared with `requires_approval=True` ends the run with `DeferredToolRequests` (the
agent's `output_type` includes it). `settle` files each call as a `tool.call` proposal (all of
them first, so the person sees them together), waits, and answers with `DeferredToolResults`:
approved as asked (`True`), approved with the person's edits (`ToolApproved(override_args=...)`),
or denied with what the model should read (`ToolDenied`: the reason, the requested changes, or
that nobody decided in time, the proposal then withdrawn). `run_sync` / `run` drive a whole run,
settling every round of approvals until the agent answers.

    from pydantic_ai import Agent, DeferredToolRequests
    from assent.adapters.pydantic_ai import run_sync

    agent = Agent(model, output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_post(post_id: int) -> str: ...

    result = run_sync(agent, "tidy the blog")
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from ..client import Assent, AsyncAssent
from ..errors import NotApproved
from ..gated import outcome


def _answer(p: Any, asked: dict) -> Any:
    try:
        approved = outcome(p)
    except NotApproved as e:
        return ToolDenied(str(e))
    return True if approved == asked else ToolApproved(override_args=approved)


def _envelope(call: Any, session_id: str | None, audience: str | None) -> dict:
    return {"session_id": session_id, "audience": audience, "lease_secs": 15,
            "idempotency_key": f"pydantic-ai:{call.tool_call_id}"[:200]}


def settle(requests: DeferredToolRequests, client: Assent | None = None, *, timeout: float = 3600,
           session_id: str | None = None, audience: str | None = None) -> DeferredToolResults:
    """The person's answers (through Assent) to every approval `requests` holds."""
    c = client or Assent()
    results = DeferredToolResults()
    filed = []
    for call in requests.approvals:
        asked = call.args_as_dict()
        filed.append((call, asked, c.propose_tool(call.tool_name, asked, **_envelope(call, session_id, audience))))
    for call, asked, p in filed:
        results.approvals[call.tool_call_id] = _answer(c.wait(p.id, timeout, withdraw_on_timeout=True), asked)
    return results


async def asettle(requests: DeferredToolRequests, client: AsyncAssent | None = None, *, timeout: float = 3600,
                  session_id: str | None = None, audience: str | None = None) -> DeferredToolResults:
    """`settle`, awaited."""
    c = client or AsyncAssent()
    results = DeferredToolResults()
    filed = []
    for call in requests.approvals:
        asked = call.args_as_dict()
        filed.append((call, asked, await c.propose_tool(call.tool_name, asked, **_envelope(call, session_id, audience))))
    for call, asked, p in filed:
        results.approvals[call.tool_call_id] = _answer(await c.wait(p.id, timeout, withdraw_on_timeout=True), asked)
    return results


def run_sync(agent: Any, prompt: str | None = None, *, client: Assent | None = None, timeout: float = 3600,
             session_id: str | None = None, audience: str | None = None, **kwargs: Any) -> Any:
    """Runs `agent` to its answer, settling each round of approvals through Assent."""
    result = agent.run_sync(prompt, **kwargs)
    while isinstance(result.output, DeferredToolRequests):
        answers = settle(result.output, client, timeout=timeout, session_id=session_id, audience=audience)
        result = agent.run_sync(message_history=result.all_messages(), deferred_tool_results=answers,
                                **{k: v for k, v in kwargs.items() if k != "message_history"})
    return result


async def run(agent: Any, prompt: str | None = None, *, client: AsyncAssent | None = None, timeout: float = 3600,
              session_id: str | None = None, audience: str | None = None, **kwargs: Any) -> Any:
    """`run_sync`, awaited."""
    result = await agent.run(prompt, **kwargs)
    while isinstance(result.output, DeferredToolRequests):
        answers = await asettle(result.output, client, timeout=timeout, session_id=session_id, audience=audience)
        result = await agent.run(message_history=result.all_messages(), deferred_tool_results=answers,
                                 **{k: v for k, v in kwargs.items() if k != "message_history"})
    return result
