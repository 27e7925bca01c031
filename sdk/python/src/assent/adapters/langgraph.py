"""LangGraph and LangChain v1: Assent answers human-in-the-loop interrupts.

`HumanInTheLoopMiddleware` (and any node that calls `interrupt()` with a HITL request) pauses
the graph with action requests. `decide` files each as a `tool.call` proposal (all of a round
at once, every interrupt's), waits on them all at once (an open wait keeps a proposal's lease,
so none is withdrawn while the person decides another) and answers with the decisions the
middleware takes: `approve`, `edit` (the person's arguments whole, as the edited action),
`reject` with their reason, and a request for changes as `respond` (the model reads the
person's words as the tool's answer; `reject` when the tool does not allow `respond`). No
decision in time: rejected, the proposal withdrawn. `invoke` / `ainvoke` run a graph to its
end, resuming every interrupt from Assent.

    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from assent.adapters.langgraph import invoke

    agent = create_agent(model, tools=[delete_post], checkpointer=InMemorySaver(),
                         middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_post": True})])
    result = invoke(agent, {"messages": [("user", "tidy the blog")]}, {"configurable": {"thread_id": "t1"}})
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.types import Command

from ..client import Assent, AsyncAssent
from ..errors import NotApproved, Refined
from ._common import afile_one, approved, await_filed, file_one, filled, left_out, same_args, unfit, wait_filed


def _allowed(request: dict, name: str) -> list[str]:
    for c in request.get("review_configs", []):
        if c.get("action_name") == name:
            return list(c.get("allowed_decisions", []))
    return ["approve", "edit", "reject"]


def schemas(graph: Any) -> dict[str, dict]:
    """The JSON schema of each tool of `graph`'s tool nodes, by name: where their defaults are."""
    out: dict[str, dict] = {}
    for node in (getattr(graph, "nodes", None) or {}).values():
        for name, t in (getattr(getattr(node, "bound", None), "tools_by_name", None) or {}).items():
            schema = getattr(t, "tool_call_schema", None)
            schema = schema.model_json_schema() if hasattr(schema, "model_json_schema") else schema
            if isinstance(schema, dict):
                out[name] = schema
    return out


def _decision(p: Any, action: dict, allowed: list[str], schema: dict | None = None) -> dict:
    try:
        ok = approved(p)
    except Refined as e:
        if "respond" in allowed:
            return {"type": "respond", "message": str(e)}
        return {"type": "reject", "message": str(e)}
    except NotApproved as e:
        return {"type": "reject", "message": str(e)}
    if isinstance(ok, dict) and (missing := left_out(ok, schema)):
        return {"type": "reject", "message": unfit(missing)}
    if same_args(ok, action.get("args", {})) or same_args(ok, filled(action.get("args", {}), schema)):
        return {"type": "approve"}
    if not isinstance(ok, dict):
        return {"type": "reject", "message": f"The person approved this only with the input {json.dumps(ok)}, "
                "which is not arguments for this tool: it did not run"}
    if "edit" in allowed:
        # The person's arguments whole: the middleware runs the call with these and no others.
        return {"type": "edit", "edited_action": {"name": action["name"], "args": ok}}
    return {"type": "reject", "message": "The person approved this only as edited in Assent: call it again with "
            f"these arguments: {json.dumps(ok)}"}


def _actions(requests: list[dict]) -> list[tuple[int, dict]]:
    """Every action of `requests`, with the index of the request it belongs to."""
    return [(n, a) for n, r in enumerate(requests) for a in r.get("action_requests", [])]


def _answers(requests: list[dict], actions: list[tuple[int, dict]], done: list[Any],
             tools: dict[str, dict]) -> list[dict]:
    """Each request's answer (`{"decisions": [...]}`), from its actions' settled proposals."""
    out: list[dict] = [{"decisions": []} for _ in requests]
    for (n, a), p in zip(actions, done):
        out[n]["decisions"].append(_decision(p, a, _allowed(requests[n], a["name"]), tools.get(a["name"])))
    return out


def _envelope(action: dict, session_id: str | None, audience: str | None) -> dict:
    lines = (action.get("description") or "").splitlines()
    return {"title": lines[0][:200] if lines and lines[0] else None, "session_id": session_id, "audience": audience,
            "lease_secs": 15}


def _shown(a: dict, tools: dict[str, dict]) -> dict:
    """An action's arguments as the tool will run them: the defaults of those the model left out
    filled in, so the person sees them."""
    return filled(a.get("args", {}), tools.get(a["name"]))


def _decide_all(requests: list[dict], c: Assent, timeout: float, session_id: str | None,
                audience: str | None, tools: dict[str, dict] | None = None) -> list[dict]:
    """The answers to several HITL requests (a round's interrupts): every action filed first,
    then all waited on at once, so none is withdrawn while the person decides another."""
    tools = tools or {}
    actions = _actions(requests)
    filed = [file_one(lambda a=a: c.propose_tool(a["name"], _shown(a, tools), **_envelope(a, session_id, audience)))
             for _, a in actions]
    return _answers(requests, actions, wait_filed(c, filed, timeout), tools)


async def _adecide_all(requests: list[dict], c: AsyncAssent, timeout: float, session_id: str | None,
                       audience: str | None, tools: dict[str, dict] | None = None) -> list[dict]:
    """`_decide_all`, awaited."""
    tools = tools or {}
    actions = _actions(requests)
    filed = [await afile_one(c.propose_tool(a["name"], _shown(a, tools), **_envelope(a, session_id, audience)))
             for _, a in actions]
    return _answers(requests, actions, await await_filed(c, filed, timeout), tools)


def decide(request: dict, client: Assent | None = None, *, timeout: float = 3600, session_id: str | None = None,
           audience: str | None = None) -> dict:
    """The answer (`{"decisions": [...]}`) to one HITL request, from the person in Assent."""
    return _decide_all([request], client or Assent(), timeout, session_id, audience)[0]


async def adecide(request: dict, client: AsyncAssent | None = None, *, timeout: float = 3600,
                  session_id: str | None = None, audience: str | None = None) -> dict:
    """`decide`, awaited."""
    return (await _adecide_all([request], client or AsyncAssent(), timeout, session_id, audience))[0]


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
        answers = _decide_all([i.value for i in interrupts], c, timeout, session_id, audience, schemas(graph))
        result = graph.invoke(_resume(interrupts, answers), config)
    return result


async def ainvoke(graph: Any, input: Any, config: dict, *, client: AsyncAssent | None = None, timeout: float = 3600,
                  session_id: str | None = None, audience: str | None = None) -> Any:
    """`invoke`, awaited."""
    c = client or AsyncAssent()
    result = await graph.ainvoke(input, config)
    while isinstance(result, dict) and result.get("__interrupt__"):
        interrupts = result["__interrupt__"]
        answers = await _adecide_all([i.value for i in interrupts], c, timeout, session_id, audience,
                                     schemas(graph))
        result = await graph.ainvoke(_resume(interrupts, answers), config)
    return result
