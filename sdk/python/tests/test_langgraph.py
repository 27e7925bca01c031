"""The LangGraph / LangChain v1 adapter with the real packages (pinned in requirements-dev.txt):
`create_agent` with `HumanInTheLoopMiddleware`, a scripted chat model (LangChain's own fake
model), against the real server."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from assent import Assent
from assent.adapters.langgraph import invoke


class Scripted(GenericFakeChatModel):
    """LangChain's fake chat model, taking tools as a real one does."""

    def bind_tools(self, tools, **kwargs):
        return self


def asking_agent(messages: list, ran: list):
    """An agent whose model says `messages` in turn, and whose tool `delete_post` (each id it
    deletes noted in `ran`) waits for approval through the middleware."""

    @tool
    def delete_post(post_id: int) -> str:
        """Deletes a post."""
        ran.append(post_id)
        return f"deleted {post_id}"

    return create_agent(Scripted(messages=iter(messages)), tools=[delete_post], checkpointer=InMemorySaver(),
                        middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_post": True})])


def test_approve_edit_reject_and_refine_through_the_middleware(server):
    ran = []
    calls = [AIMessage(content="", tool_calls=[{"name": "delete_post", "args": {"post_id": n}, "id": f"c{n}"}])
             for n in (7, 8, 9, 10)]
    agent = asking_agent(calls + [AIMessage(content="done")], ran)
    server.decide_in_turn([{"outcome": "approve"}, {"outcome": "approve", "edits": {"input": {"post_id": 80}}},
                           {"outcome": "reject", "reason": "keep pricing"},
                           {"outcome": "refine", "feedback": "archive it instead"}])
    with Assent() as client:
        result = invoke(agent, {"messages": [("user", "tidy the blog")]}, {"configurable": {"thread_id": "t1"}},
                        client=client, session_id="lg-1", timeout=30)
    assert ran == [7, 80], "approved as asked, and as the person edited it"
    told = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert told[0] == "deleted 7"
    assert told[1].endswith("deleted 80") and '{"post_id": 80}' in told[1], "the model is told the person's edit ran"
    assert "keep pricing" in told[2]
    assert "archive it instead" in told[3]
    assert result["messages"][-1].content == "done"
    asked = server.owner_call("GET", "/proposals?session_id=lg-1")["items"]
    assert sorted(p["payload"]["input"]["post_id"] for p in asked) == [7, 8, 9, 10]


def test_undecided_is_withdrawn_and_not_running_is_a_clear_error(server, tmp_path, monkeypatch):
    import pytest

    import assent

    ran = []

    def agent():
        call = AIMessage(content="", tool_calls=[{"name": "delete_post", "args": {"post_id": 1}, "id": "c1"}])
        return asking_agent([call, AIMessage(content="done")], ran)

    with Assent() as client:
        result = invoke(agent(), {"messages": [("user", "go")]}, {"configurable": {"thread_id": "t2"}}, client=client,
                        session_id="lg-2", timeout=1)
    told = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert ran == [] and "withdrawn" in told[0]
    assert server.owner_call("GET", "/proposals?session_id=lg-2")["items"][0]["status"] == "withdrawn"
    monkeypatch.setenv("ASSENT_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(assent.AssentNotRunning):
        invoke(agent(), {"messages": [("user", "go")]}, {"configurable": {"thread_id": "t3"}})
    assert ran == []


def one_turn(server, ids, after: float, thread: str):
    """A run whose model deletes each of `ids` in one turn, the person approving every call filed
    once all are pending, `after` seconds later: what ran, and the result."""
    ran = []
    turn = AIMessage(content="", tool_calls=[{"name": "delete_post", "args": {"post_id": n}, "id": f"call_{i}"}
                                            for i, n in enumerate(ids)])
    agent = asking_agent([turn, AIMessage(content="done")], ran)
    person = server.decide_slowly(sum(1 for n in ids if n < 2**53), after=after)
    with Assent() as client:
        result = invoke(agent, {"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}}, client=client,
                        timeout=60)
    person.join()
    return sorted(ran), result


def test_every_call_of_a_turn_outlives_the_lease_while_the_person_decides(server):
    # Both calls come in one model turn. The person leaves them for 17 s, past the 15 s lease
    # the adapter asks for plus the server's one-second sweep: as short as shows a lapse.
    ran, result = one_turn(server, (1, 2), after=17, thread="t4")
    assert ran == [1, 2], "both ran: neither was withdrawn while the person took their time"
    assert result["messages"][-1].content == "done"


def test_a_refused_argument_is_a_denial_the_model_reads_and_the_turn_goes_on(server):
    """One call of a three-call turn has an argument Assent refuses (an integer beyond 2^53-1):
    that call is rejected with Assent's reason, which the model reads, and the other two go to
    the person and run once approved; nothing is left waiting."""
    ran, result = one_turn(server, (1, 2**60, 3), after=0, thread="t9")
    assert ran == [1, 3]
    assert result["messages"][-1].content == "done"
    told = " ".join(str(m.content) for m in result["messages"])
    assert "Assent refused this call" in told, told
    assert server.owner_call("GET", "/proposals?status=pending")["items"] == []


def test_the_defaults_a_model_left_out_are_shown_and_never_run_unseen(server):
    """The model leaves out `recursive`, whose default (True) is filled in and shown. Approved as
    shown it runs with it; an edit that deletes it is rejected as unfit (the tool would have run
    the default the person deleted), and the model reads why."""
    ran = []

    @tool
    def delete_path(path: str, recursive: bool = True) -> str:
        """Deletes a path."""
        ran.append((path, recursive))
        return f"deleted {path}"

    for n, (decision, runs) in enumerate([({"outcome": "approve"}, [("build", True)]),
                                          ({"outcome": "approve", "edits": {"input": {"path": "build"}}}, [])]):
        ran.clear()
        turn = AIMessage(content="", tool_calls=[{"name": "delete_path", "args": {"path": "build"}, "id": "call_0"}])
        agent = create_agent(Scripted(messages=iter([turn, AIMessage(content="done")])), tools=[delete_path],
                             checkpointer=InMemorySaver(),
                             middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_path": True})])
        t = server.decide_next(decision)
        with Assent() as client:
            result = invoke(agent, {"messages": [("user", "go")]}, {"configurable": {"thread_id": f"d{n}"}},
                            client=client, timeout=30)
        t.join()
        shown = server.owner_call("GET", "/proposals?limit=1")["items"][0]["payload"]["input"]
        assert shown == {"path": "build", "recursive": True}, shown
        assert ran == runs, (decision, ran)
        if not runs:
            told = " ".join(str(m.content) for m in result["messages"])
            assert "without `recursive`" in told, told
