"""The Pydantic AI adapter with the real framework (pinned in requirements-dev.txt) and a
scripted model (its own FunctionModel: no network), against the real server."""

from __future__ import annotations

import json

import pytest
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from assent import Assent
from assent.adapters.pydantic_ai import run_sync


def scripted(calls: list[tuple[str, dict]], seen: list):
    """A model that makes `calls`, one a turn, then answers with what the tools returned."""

    def model(messages, info):
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if len(returns) < len(calls):
            name, args = calls[len(returns)]
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(returns)}")])
        seen.extend(str(r.content) for r in returns)
        return ModelResponse(parts=[TextPart("done: " + " | ".join(str(r.content) for r in returns))])

    return FunctionModel(model)


def agent_with(calls, seen, ran):
    agent = Agent(scripted(calls, seen), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_post(post_id: int) -> str:
        ran.append(post_id)
        return f"deleted {post_id}"

    return agent


def test_approved_with_edits_runs_rejected_and_refined_reach_the_model(server):
    seen, ran = [], []
    agent = agent_with([("delete_post", {"post_id": 7}), ("delete_post", {"post_id": 9}), ("delete_post", {"post_id": 10})],
                       seen, ran)
    server.decide_in_turn([{"outcome": "approve", "edits": {"input": {"post_id": 8}}},
                           {"outcome": "reject", "reason": "keep pricing"},
                           {"outcome": "refine", "feedback": "archive it instead"}])
    with Assent() as client:
        result = run_sync(agent, "tidy the blog", client=client, session_id="blog-tidy")
    assert ran == [8], "only the approved call ran, with the person's edit"
    assert seen[0] == "deleted 8"
    assert "keep pricing" in seen[1] and "rejected" in seen[1]
    assert "archive it instead" in seen[2]
    assert result.output.startswith("done:")
    items = server.owner_call("GET", "/proposals?session_id=blog-tidy")["items"]
    assert sorted(json.dumps(p["payload"]["input"]) for p in items) == sorted(
        json.dumps({"post_id": n}) for n in (7, 9, 10))


def test_a_timeout_withdraws_and_the_model_is_told(server):
    seen, ran = [], []
    agent = agent_with([("delete_post", {"post_id": 1})], seen, ran)
    with Assent() as client:
        run_sync(agent, "go", client=client, timeout=1)
    assert ran == []
    assert "nobody decided" in seen[0] or "withdrawn" in seen[0]
    assert server.owner_call("GET", "/proposals?status=withdrawn")["items"][0]["payload"]["input"] == {"post_id": 1}


def test_assent_not_running_is_a_clear_error(tmp_path, monkeypatch):
    import assent

    monkeypatch.setenv("ASSENT_HOME", str(tmp_path))
    ran = []
    agent = agent_with([("delete_post", {"post_id": 1})], [], ran)
    with pytest.raises(assent.AssentNotRunning):
        run_sync(agent, "go")
    assert ran == []
