"""LangGraph and LangChain v1: Assent answers human-in-the-loop interrupts.

`HumanInTheLoopMiddleware` (and any node that calls `interrupt()` with a HITL request) pauses
the graph with action requests. `decide` files each as a `tool.call` proposal (all of a round
at once) and answers with the decisions the middleware takes: `approve`, `edit` (the person's
edits, as the edited action), `reject` with their reason, and a request for changes as `respond`
(the model reads the person's words as the tool's answer; `reject` when the tool does not allow
`respond`). No decision in time: rejected, the proposal withdrawn. `invoke` / `ainvoke` run a
graph to its end, resuming every interrupt from Assent.

    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from assent.adapters.langgraph import invoke

    agent = create_agent(model, tools=[delete_post], checkpointer=InMemorySaver(),
                         middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_post": True})])
    result = invoke(agent, {"messages": [("user", "tidy the blog")]}, {"configurable": {"thread_id": "t1"}})
"""

from __future__ import annotations

from typing import Any

from langgraph.types import Command

from ..client import Assent, AsyncAssent
from ..errors import NotApproved, Refined
from ..gated import outcome


def _allowed(request: dict, name: str) -> list[str]:
    for c in request.get("review_configs", []):
        if c.get("action_name") == name:
            return list(c.get("allowed_decisions", []))
    return ["approve", "edit", "reject"]


def _decision(p: Any, action: dict, allowed: list[str]) -> dict:
    try:
        approved = outcome(p)
    except Refined as e:
        if "respond" in allowed:
            return {"type": "respond", "message": str(e)}
        return {"type": "reject", "message": str(e)}
    except NotApproved as e:
        return {"type": "reject", "message": str(e)}
    if approved == action.get("args", {}):
        return {"type": "approve"}
    if "edit" in allowed:
        return {"type": "edit", "edited_action": {"name": action["name"], "args": approved}}
    return {"type": "reject", "message": "The person approved this only as edited in Assent: call it again with "
            f"these arguments: {approved}"}


def _file(c: Assent, action: dict, session_id: str | None, audience: str | None) -> Any:
    title = (action.get("description") or "").splitlines()[0][:200] or None
    return c.propose_tool(action["name"], action.get("args", {}), title=title, session_id=session_id,
                          audience=audience, lease_secs=15)


def decide(request: dict, client: Assent | None = None, *, timeout: float = 3600, session_id: str | None = None,
           audience: str | None = None) -> dict:
    """The answer (`{"decisions": [...]}`) to one HITL request, from the person in Assent."""
    c = client or Assent()
    actions = request.get("action_requests", [])
    filed = [(a, _file(c, a, session_id, audience)) for a in actions]
    return {"decisions": [_decision(c.wait(p.id, timeout, withdraw_on_timeout=True), a, _allowed(request, a["name"]))
                          for a, p in filed]}


async def adecide(request: dict, client: AsyncAssent | None = None, *, timeout: float = 3600,
                  session_id: str | None = None, audience: str | None = None) -> dict:
    """`decide`, awaited."""
    c = client or AsyncAssent()
    filed = []
    for a in request.get("action_requests", []):
        title = (a.get("description") or "").splitlines()[0][:200] or None
        filed.append((a, await c.propose_tool(a["name"], a.get("args", {}), title=title, session_id=session_id,
                                              audience=audience, lease_secs=15)))
    return {"decisions": [_decision(await c.wait(p.id, timeout, withdraw_on_timeout=True), a,
                                    _allowed(request, a["name"])) for a, p in filed]}


def _resume(interrupts: list, answers: list[dict]) -> Command:
    if len(interrupts) == 1:
        return Command(resume=answers[0])
    return Command(resume={i.id: a for i, a in zip(interrupts, answers)})


def invoke(graph: Any, input: Any, config: dict, *, client: Assent | None = None, timeout: float = 3600,
           session_id: str | None = None, audience: str | None = None) -> Any:
    """Runs `graph` to its end, answering every HITL interrupt from Assent."""
    c = client or Assent()
    result = graph.invoke(input, config)
    while isinstance(result, dict) and result.get("__interrupt__"):
        interrupts = result["__interrupt__"]
        answers = [decide(i.value, c, timeout=timeout, session_id=session_id, audience=audience) for i in interrupts]
        result = graph.invoke(_resume(interrupts, answers), config)
    return result


async def ainvoke(graph: Any, input: Any, config: dict, *, client: AsyncAssent | None = None, timeout: float = 3600,
                  session_id: str | None = None, audience: str | None = None) -> Any:
    """`invoke`, awaited."""
    c = client or AsyncAssent()
    result = await graph.ainvoke(input, config)
    while isinstance(result, dict) and result.get("__interrupt__"):
        interrupts = result["__interrupt__"]
        answers = [await adecide(i.value, c, timeout=timeout, session_id=session_id, audience=audience)
                   for i in interrupts]
        result = await graph.ainvoke(_resume(interrupts, answers), config)
    return result
