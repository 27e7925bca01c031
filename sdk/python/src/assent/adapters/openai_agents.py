"""The OpenAI Agents SDK: Assent settles a run's tool approvals.

Tools declared with `needs_approval=True` pause the run: its result lists `interruptions`.
`run` (and `run_sync`) files each as a `tool.call` proposal (all of a round at once, the
arguments as the model gave them), waits on them all at once (an open wait keeps a proposal's
lease, so none is withdrawn while the person decides another), and settles the run's state
with the person's answers: `approve`, or `reject` with their words for the model
(`rejection_message`), then resumes until the agent answers. An approval with edits cannot run
as edited here (the SDK approves the call as the model made it), so it is answered as a
rejection that tells the model the edited arguments to call again with, which comes back to
Assent as a new proposal. No decision in time: rejected, and the proposal withdrawn. A
proposal's idempotency key is its call id under a random key made for each round: a model that
reuses ids such as `call_0` (as local model servers do) files new proposals, never getting an
earlier decision.

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
from ._common import afile_one, approved, await_filed, call_key, filled, left_out, new_run_key, same_args, unfit


def _arguments(item: Any) -> dict:
    try:
        args = json.loads(item.arguments or "{}")
    except ValueError:
        args = {"arguments": item.arguments}
    return args if isinstance(args, dict) else {"arguments": args}


def schemas(agent: Any) -> dict[str, dict]:
    """The JSON schema of each of `agent`'s function tools, by name: where their defaults are."""
    return {t.name: t.params_json_schema for t in getattr(agent, "tools", None) or []
            if isinstance(getattr(t, "params_json_schema", None), dict)}


async def settle(state: Any, interruptions: list, client: AsyncAssent, *, timeout: float = 3600,
                 session_id: str | None = None, audience: str | None = None, run_key: str | None = None,
                 tools: dict[str, dict] | None = None) -> None:
    """Approves or rejects each of `interruptions` on `state` as the person decides in Assent,
    waiting on them all at once. `run_key` scopes the idempotency keys (the call ids): settling
    the same interruptions again with the same `run_key` (a retry) files nothing twice, while
    another run never gets an earlier run's decision; left out, each call of `settle` is a run
    of its own (as each round of `run` is). `tools` (`schemas(agent)`): the defaults of the
    arguments a model left out are filled in and shown, and an approval that leaves one out is
    rejected as unfit, never run with a default the person did not see."""
    run_key = run_key or new_run_key()
    tools = tools or {}
    filed = []
    for item in interruptions:
        # The call as the tool will run it: the defaults of what the model left out (a tool that
        # is not strict) filled in and shown, so none runs unseen.
        schema = tools.get(item.tool_name or item.name)
        args = filled(_arguments(item), schema)
        key = call_key("openai-agents", run_key, getattr(item, "call_id", None))
        p = await afile_one(client.propose_tool(item.tool_name or item.name, args, session_id=session_id,
                                                audience=audience, lease_secs=15, idempotency_key=key))
        filed.append((item, args, p))
    done = await await_filed(client, [p for _, _, p in filed], timeout)
    for (item, args, _), p in zip(filed, done):
        try:
            ok = approved(p)
        except NotApproved as e:
            state.reject(item, rejection_message=str(e))
            continue
        if isinstance(ok, dict) and (missing := left_out(ok, tools.get(item.tool_name or item.name))):
            state.reject(item, rejection_message=unfit(missing))
        elif same_args(ok, args):
            state.approve(item)
        else:
            state.reject(item, rejection_message=(
                "The person approved this only as edited in Assent: call the tool again with these arguments: "
                + json.dumps(ok)))


async def run(agent: Any, input: Any, *, client: AsyncAssent | None = None, timeout: float = 3600,
              session_id: str | None = None, audience: str | None = None, **kwargs: Any) -> Any:
    """Runs `agent` to its answer, settling every round of tool approvals through Assent."""
    c = client or AsyncAssent()
    result = await Runner.run(agent, input, **kwargs)
    while result.interruptions:
        state = result.to_state()
        await settle(state, result.interruptions, c, timeout=timeout, session_id=session_id, audience=audience,
                     tools=schemas(agent))
        result = await Runner.run(agent, state, **kwargs)
    return result


def run_sync(agent: Any, input: Any, **kwargs: Any) -> Any:
    """`run`, from synchronous code."""
    import asyncio

    return asyncio.run(run(agent, input, **kwargs))
