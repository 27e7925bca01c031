"""The OpenAI Agents SDK adapter with the real SDK (pinned in requirements-dev.txt) and a scripted
model (a Model of its own interface: no network), against the real server."""

from __future__ import annotations

import asyncio
import json

from agents import Agent, ModelSettings, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from assent import AsyncAssent
from assent.adapters.openai_agents import run


set_tracing_disabled(True)  # no network


class Scripted(Model):
    """Makes `calls`, one a turn; then answers with every tool output it was sent."""

    def __init__(self, calls: list[tuple[str, dict]], seen: list):
        self.calls, self.seen, self.n = calls, seen, 0

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing,
                           **kwargs):
        outputs = [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"] \
            if isinstance(input, list) else []
        if self.n < len(self.calls) and len(outputs) >= self.n:
            name, args = self.calls[self.n]
            self.n += 1
            call = ResponseFunctionToolCall(type="function_call", name=name, arguments=json.dumps(args),
                                            call_id=f"call_{self.n}", id=f"fc_{self.n}", status="completed")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        self.seen[:] = [str(o.get("output")) for o in outputs]
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        msg = ResponseOutputMessage(type="message", id="msg_1", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[msg], usage=Usage(), response_id=None)

    async def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def test_approved_rejected_and_edited_calls(server):
    ran, seen = [], []

    @function_tool(needs_approval=True)
    def delete_post(post_id: int) -> str:
        """Deletes a post."""
        ran.append(post_id)
        return f"deleted {post_id}"

    model = Scripted([("delete_post", {"post_id": 7}), ("delete_post", {"post_id": 9}), ("delete_post", {"post_id": 10}),
                      ("delete_post", {"post_id": 12})], seen)
    agent = Agent(name="blog", tools=[delete_post], model=model, model_settings=ModelSettings())
    server.decide_in_turn([{"outcome": "approve"}, {"outcome": "reject", "reason": "keep pricing"},
                           {"outcome": "approve", "edits": {"input": {"post_id": 11}}},
                           {"outcome": "refine", "feedback": "archive it instead"}])

    async def go():
        async with AsyncAssent() as client:
            return await run(agent, "tidy the blog", client=client, session_id="oa-1", timeout=30)

    result = asyncio.run(go())
    assert ran == [7], "only the call approved as made ran"
    joined = " | ".join(seen)
    assert "deleted 7" in joined
    assert "keep pricing" in joined, joined
    assert '{"post_id": 11}' in joined, "the model is told the edited arguments to call with"
    assert "archive it instead" in joined, "a request for changes reaches the model"
    assert result.final_output == "done"
    asked = server.owner_call("GET", "/proposals?session_id=oa-1")["items"]
    assert sorted(p["payload"]["input"]["post_id"] for p in asked) == [7, 9, 10, 12]


def test_undecided_is_withdrawn_and_not_running_is_a_clear_error(server, tmp_path, monkeypatch):
    import pytest

    import assent

    ran, seen = [], []

    @function_tool(needs_approval=True)
    def delete_post(post_id: int) -> str:
        """Deletes a post."""
        ran.append(post_id)
        return "deleted"

    agent = Agent(name="blog", tools=[delete_post], model=Scripted([("delete_post", {"post_id": 1})], seen))

    async def go():
        async with AsyncAssent() as client:
            return await run(agent, "go", client=client, session_id="oa-2", timeout=1)

    asyncio.run(go())
    assert ran == [] and "withdrawn" in " ".join(seen)
    assert server.owner_call("GET", "/proposals?session_id=oa-2")["items"][0]["status"] == "withdrawn"
    monkeypatch.setenv("ASSENT_HOME", str(tmp_path / "nowhere"))
    again = Agent(name="blog", tools=[delete_post], model=Scripted([("delete_post", {"post_id": 2})], []))
    with pytest.raises(assent.AssentNotRunning):
        asyncio.run(run(again, "go"))
    assert ran == []


class OneTurn(Model):
    """Makes every call of `calls` in one turn (ids `call_0`, `call_1`, ... as local model
    servers number them), then answers "done"."""

    def __init__(self, calls: list[tuple[str, dict]]):
        self.calls = calls

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing,
                           **kwargs):
        answered = isinstance(input, list) and any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in input)
        if not answered:
            output = [ResponseFunctionToolCall(type="function_call", name=name, arguments=json.dumps(args),
                                               call_id=f"call_{n}", id=f"fc_{n}", status="completed")
                      for n, (name, args) in enumerate(self.calls)]
            return ModelResponse(output=output, usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        msg = ResponseOutputMessage(type="message", id="msg_1", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[msg], usage=Usage(), response_id=None)

    async def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def deleter(ran: list):
    @function_tool(needs_approval=True)
    def delete_post(post_id: int) -> str:
        """Deletes a post."""
        ran.append(post_id)
        return f"deleted {post_id}"

    return delete_post


def test_a_reused_call_id_in_a_new_run_asks_the_person_again(server):
    ran = []
    tool = deleter(ran)

    async def go(decision):
        server.decide_next(decision)
        agent = Agent(name="blog", tools=[tool], model=OneTurn([("delete_post", {"post_id": 7})]))
        async with AsyncAssent() as client:
            return await run(agent, "go", client=client, session_id="oa-reuse", timeout=30)

    asyncio.run(go({"outcome": "approve"}))
    assert ran == [7]
    asyncio.run(go({"outcome": "reject", "reason": "once is enough"}))
    assert ran == [7], "the second run's call_0 waited for the person, who said no"
    items = server.owner_call("GET", "/proposals?session_id=oa-reuse")["items"]
    assert sorted(p["status"] for p in items) == ["approved", "rejected"]


def one_turn(server, ids, after: float):
    """A run whose model deletes each of `ids` in one turn, the person approving every call filed
    once all are pending, `after` seconds later: what ran, and the result."""
    ran = []
    agent = Agent(name="blog", tools=[deleter(ran)], model=OneTurn([("delete_post", {"post_id": n}) for n in ids]))
    person = server.decide_slowly(sum(1 for n in ids if n < 2**53), after=after)

    async def go():
        async with AsyncAssent() as client:
            return await run(agent, "go", client=client, timeout=60)

    result = asyncio.run(go())
    person.join()
    return sorted(ran), result


def test_every_call_of_a_turn_outlives_the_lease_while_the_person_decides(server):
    # The person leaves both calls of the turn for 17 s, past the 15 s lease the adapter asks
    # for plus the server's one-second sweep: as short as shows a lapse.
    ran, result = one_turn(server, (1, 2), after=17)
    assert ran == [1, 2], "both ran: neither was withdrawn while the person took their time"
    assert result.final_output == "done"


def test_a_refused_argument_is_a_denial_the_model_reads_and_the_turn_goes_on(server):
    """One call of a three-call turn has an argument Assent refuses (an integer beyond 2^53-1):
    that call is rejected with Assent's reason, and the other two go to the person and run once
    approved; the run ends with the model's answer, nothing left waiting."""
    ran, result = one_turn(server, (1, 2**60, 3), after=0)
    assert ran == [1, 3]
    assert result.final_output == "done"
    told = json.dumps([i for i in result.to_input_list() if isinstance(i, dict)], default=str)
    assert "Assent refused this call" in told, told
    assert server.owner_call("GET", "/proposals?status=pending")["items"] == []


def test_the_defaults_a_model_left_out_are_shown_and_never_run_unseen(server):
    """A tool that is not strict: the model leaves out `recursive`, whose default (True) is
    filled in and shown. Approved as shown it runs with it; an edit that deletes it is rejected
    as unfit (the tool would have run the default the person deleted)."""
    ran = []

    @function_tool(needs_approval=True, strict_mode=False)
    def delete_path(path: str, recursive: bool = True) -> str:
        """Deletes a path."""
        ran.append((path, recursive))
        return f"deleted {path}"

    async def go():
        async with AsyncAssent() as client:
            agent = Agent(name="fs", tools=[delete_path], model=OneTurn([("delete_path", {"path": "build"})]))
            return await run(agent, "go", client=client, timeout=30)

    for decision, runs in [({"outcome": "approve"}, [("build", True)]),
                           ({"outcome": "approve", "edits": {"input": {"path": "build"}}}, [])]:
        ran.clear()
        t = server.decide_next(decision)
        result = asyncio.run(go())
        t.join()
        shown = server.owner_call("GET", "/proposals?limit=1")["items"][0]["payload"]["input"]
        assert shown == {"path": "build", "recursive": True}, shown
        assert ran == runs, (decision, ran)
        if not runs:
            told = json.dumps([i for i in result.to_input_list() if isinstance(i, dict)], default=str)
            assert "without `recursive`" in told, told
