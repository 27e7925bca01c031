"""The OpenAI Agents SDK: Assent settles a run's tool approvals.

Tools declared with `needs_approval=True` pause the run: its result lists `interruptions`.
`run` (and `run_sync`) files each as a `tool.call` proposal (all of a round at once, the
arguments as the model gave them), waits, and settles the run's state with the person's
answers: `approve`, or `reject` with their words for the model (`rejection_message`), then
resumes until the agent answers. An approval with edits cannot run as edited here (the SDK
approves the call as the model made it), so it is answered as a rejection that tells the model
the edited arguments to call again with, which comes back to Assent as a new proposal. No
decision in time: rejected, and the proposal withdrawn.

    from agents import Agent, function_tool
    from assent.adapters.openai_agents import run

    @function_tool(needs_approval=True)
    def delete_post(post_id: int) -> str: ...

    result = await run(Agent(name="blog", tools=[delete_post]), "tidy the blog")
"""

from __future__ import annotations

import json
from typing import Any

from agents import Runner

from ..client import AsyncAssent
from ..errors import NotApproved
from ..gated import outcome


def _arguments(item: Any) -> dict:
    try:
        args = json.loads(item.arguments or "{}")
    except ValueError:
        args = {"arguments": item.arguments}
    return args if isinstance(args, dict) else {"arguments": args}


async def settle(state: Any, interruptions: list, client: AsyncAssent, *, timeout: float = 3600,
                 session_id: str | None = None, audience: str | None = None) -> None:
    """Approves or rejects each of `interruptions` on `state` as the person decides in Assent."""
    filed = []
    for item in interruptions:
        args = _arguments(item)
        key = f"openai-agents:{item.call_id}"[:200] if getattr(item, "call_id", None) else None
        p = await client.propose_tool(item.tool_name or item.name, args, session_id=session_id, audience=audience,
                                      lease_secs=15, idempotency_key=key)
        filed.append((item, args, p))
    for item, args, p in filed:
        done = await client.wait(p.id, timeout, withdraw_on_timeout=True)
        try:
            approved = outcome(done)
        except NotApproved as e:
            state.reject(item, rejection_message=str(e))
            continue
        if approved == args:
            state.approve(item)
        else:
            state.reject(item, rejection_message=(
                "The person approved this only as edited in Assent: call the tool again with these arguments: "
                + json.dumps(approved)))


async def run(agent: Any, input: Any, *, client: AsyncAssent | None = None, timeout: float = 3600,
              session_id: str | None = None, audience: str | None = None, **kwargs: Any) -> Any:
    """Runs `agent` to its answer, settling every round of tool approvals through Assent."""
    c = client or AsyncAssent()
    result = await Runner.run(agent, input, **kwargs)
    while result.interruptions:
        state = result.to_state()
        await settle(state, result.interruptions, c, timeout=timeout, session_id=session_id, audience=audience)
        result = await Runner.run(agent, state, **kwargs)
    return result


def run_sync(agent: Any, input: Any, **kwargs: Any) -> Any:
    """`run`, from synchronous code."""
    import asyncio

    return asyncio.run(run(agent, input, **kwargs))
