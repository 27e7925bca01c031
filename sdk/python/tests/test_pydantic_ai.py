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


def test_a_reused_call_id_in_a_new_run_asks_the_person_again(server):
    # A local model server numbers calls from call_0 in every run: the second run's call_0,
    # with the same arguments, must be a new proposal for the person, not the first run's answer.
    seen, ran = [], []
    agent = agent_with([("delete_post", {"post_id": 7})], seen, ran)
    with Assent() as client:
        server.decide_next({"outcome": "approve"})
        run_sync(agent, "go", client=client, session_id="reuse", timeout=30)
        assert ran == [7]
        server.decide_next({"outcome": "reject", "reason": "once is enough"})
        run_sync(agent, "go", client=client, session_id="reuse", timeout=30)
    assert ran == [7], "the second run waited for the person, who said no"
    assert "once is enough" in seen[-1]
    items = server.owner_call("GET", "/proposals?session_id=reuse")["items"]
    assert sorted(p["status"] for p in items) == ["approved", "rejected"]


def one_turn(server, ids, after: float):
    """A run whose model deletes each of `ids` in one turn (then says what the tools returned),
    the person approving every call filed once all are pending, `after` seconds later: what
    ran, and the result."""
    ran = []

    def model(messages, info):
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart("done: " + " | ".join(str(r.content) for r in returns))])
        return ModelResponse(parts=[ToolCallPart("delete_post", {"post_id": n}, tool_call_id=f"call_{i}")
                                    for i, n in enumerate(ids)])

    agent = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_post(post_id: int) -> str:
        ran.append(post_id)
        return f"deleted {post_id}"

    person = server.decide_slowly(sum(1 for n in ids if n < 2**53), after=after)
    with Assent() as client:
        result = run_sync(agent, "go", client=client, timeout=60)
    person.join()
    return sorted(ran), result


def test_every_call_of_a_turn_outlives_the_lease_while_the_person_decides(server):
    # Both calls come in one model turn. The person leaves them for 17 s, past the 15 s lease
    # the adapter asks for plus the server's one-second sweep: as short as shows a lapse.
    ran, result = one_turn(server, (1, 2), after=17)
    assert ran == [1, 2], "both ran: neither was withdrawn while the person took their time"
    assert result.output.startswith("done")


def test_the_tool_runs_with_the_persons_arguments_whole(server):
    ran = []

    def agent():
        a = Agent(scripted([("rm", {"path": "build", "recursive": True})], []), output_type=[str, DeferredToolRequests])

        @a.tool_plain(requires_approval=True)
        def rm(path: str, recursive: bool = False, dry_run: bool = False) -> str:
            ran.append((path, recursive, dry_run))
            return "done"

        return a

    with Assent() as client:
        for edited in [{"path": "build"}, {"path": "build", "recursive": True, "dry_run": True},
                       {"path": "dist", "recursive": True}]:
            server.decide_next({"outcome": "approve", "edits": {"input": edited}})
            run_sync(agent(), "go", client=client, timeout=30)
    assert ran == [("build", True, True)], \
        "an input that leaves out an argument with a default does not run (the tool would take a default the " \
        "person did not approve); a whole one runs as edited, an added argument there, a changed one changed"


def test_a_refused_argument_is_a_denial_the_model_reads_and_the_turn_goes_on(server):
    """One call of a three-call turn has an argument Assent refuses (an integer beyond 2^53-1):
    that call is denied with Assent's reason, which the model reads, and the other two go to the
    person and run once approved; nothing is left waiting."""
    ran, result = one_turn(server, (1, 2**60, 3), after=0)
    assert ran == [1, 3]
    assert "Assent refused this call" in result.output and "2^53" in result.output, result.output
    assert server.owner_call("GET", "/proposals?status=pending")["items"] == []


def test_the_defaults_a_model_left_out_are_shown_and_never_run_unseen(server):
    """The model calls `delete_path(path="build")`; the tool's default `recursive=True` is filled
    in and shown. Approved as shown it runs with it; the person's `recursive: false` runs as
    edited; an edit that deletes `recursive` is refused as unfit (Pydantic AI would have run the
    default the person deleted), and the model reads why."""
    ran = []

    def agent_for():
        agent = Agent(scripted([("delete_path", {"path": "build"})], []), output_type=[str, DeferredToolRequests])

        @agent.tool_plain(requires_approval=True)
        def delete_path(path: str, recursive: bool = True) -> str:
            ran.append((path, recursive))
            return f"deleted {path} recursive={recursive}"

        return agent

    for decision, runs in [
        ({"outcome": "approve"}, [("build", True)]),
        ({"outcome": "approve", "edits": {"input": {"path": "build", "recursive": False}}}, [("build", False)]),
        ({"outcome": "approve", "edits": {"input": {"path": "build"}}}, []),
    ]:
        ran.clear()
        t = server.decide_next(decision)
        with Assent() as client:
            result = run_sync(agent_for(), "go", client=client, timeout=30)
        t.join()
        shown = server.owner_call("GET", "/proposals?limit=1")["items"][0]["payload"]["input"]
        assert shown == {"path": "build", "recursive": True}, shown
        assert ran == runs, (decision, ran)
        if not runs:
            assert "without `recursive`" in result.output, result.output
