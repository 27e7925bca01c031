"""The Claude Agent SDK adapter with the real SDK (pinned in requirements-dev.txt, with the
Claude Code it bundles) against a stand-in model on loopback that makes scripted calls, and the
real server: the person approves one command with an edit and rejects another."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from claude_agent_sdk import ClaudeAgentOptions, query

from assent import AsyncAssent
from assent.adapters.claude_agent_sdk import can_use_tool

FAKE_MODEL = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "claude" / "fake_model_seq.py"


def test_the_person_decides_what_claude_runs(server, tmp_path):
    proj, home = tmp_path / "proj", tmp_path / "claude-home"
    proj.mkdir()
    home.mkdir()
    (proj / "keep.txt").write_text("keep")
    steps, log = tmp_path / "steps.json", tmp_path / "model.log"
    steps.write_text(json.dumps(["touch made-by-agent", "rm -f keep.txt"]))
    model = subprocess.Popen([sys.executable, str(FAKE_MODEL), str(log), str(steps)], stdout=subprocess.PIPE, text=True)
    port = model.stdout.readline().strip()
    server.decide_in_turn([{"outcome": "approve", "edits": {"input": {"command": "touch made-by-person"}}},
                           {"outcome": "reject", "reason": "keep.txt stays"}])

    async def prompts():
        yield {"type": "user", "message": {"role": "user", "content": "do the steps"}}

    async def run():
        async with AsyncAssent() as assent:
            options = ClaudeAgentOptions(
                can_use_tool=can_use_tool(assent, session_id="claude-sdk"), cwd=str(proj), max_turns=6,
                env={"HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "test-key",
                     "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "PATH": os.environ["PATH"]},
            )
            return [m async for m in query(prompt=prompts(), options=options)]

    try:
        asyncio.run(asyncio.wait_for(run(), 120))
    finally:
        model.kill()
    assert (proj / "made-by-person").exists(), "the approved call ran with the person's edit"
    assert not (proj / "made-by-agent").exists()
    assert (proj / "keep.txt").exists(), "the rejected call did not run"
    told = [json.loads(line)["tool_result"] for line in log.read_text().splitlines()]
    assert "keep.txt stays" in json.dumps(told[1]), told
    asked = server.owner_call("GET", "/proposals?session_id=claude-sdk")["items"]
    assert sorted(p["payload"]["input"]["command"] for p in asked) == ["rm -f keep.txt", "touch made-by-agent"]


def test_undecided_and_unreachable_are_denied(server, tmp_path, monkeypatch):
    async def ask(client):
        decide = can_use_tool(client, timeout=1, session_id="cas-2")
        return await decide("Bash", {"command": "rm -rf build"}, None)

    async def with_client():
        async with AsyncAssent() as a:
            return await ask(a)

    late = asyncio.run(with_client())
    assert late.behavior == "deny" and "withdrawn" in late.message
    assert server.owner_call("GET", "/proposals?session_id=cas-2")["items"][0]["status"] == "withdrawn"
    monkeypatch.setenv("ASSENT_HOME", str(tmp_path / "nowhere"))
    gone = asyncio.run(ask(None))
    assert gone.behavior == "deny" and "could not ask the person" in gone.message


def test_a_retry_gets_the_same_proposal_and_a_reused_id_a_new_one(server):
    ctx = SimpleNamespace(tool_use_id="call_0")

    async def go():
        async with AsyncAssent() as a:
            decide = can_use_tool(a, session_id="cas-reuse", timeout=30)
            server.decide_next({"outcome": "approve"})
            # Asked twice for the same call before an answer (a retry): one proposal.
            both = await asyncio.gather(decide("Bash", {"command": "ls"}, ctx), decide("Bash", {"command": "ls"}, ctx))
            assert [r.behavior for r in both] == ["allow", "allow"]
            assert len(server.owner_call("GET", "/proposals?session_id=cas-reuse")["items"]) == 1
            # The same id once answered is another call (ids numbered afresh each turn) ...
            server.decide_next({"outcome": "reject", "reason": "not twice"})
            again = await decide("Bash", {"command": "ls"}, ctx)
            assert again.behavior == "deny" and "not twice" in again.message
            # ... and another run (a callback of its own) never gets an earlier decision.
            server.decide_next({"outcome": "reject", "reason": "new run, new question"})
            other = await can_use_tool(a, session_id="cas-reuse", timeout=30)("Bash", {"command": "ls"}, ctx)
            assert other.behavior == "deny" and "new run" in other.message

    asyncio.run(go())
    items = server.owner_call("GET", "/proposals?session_id=cas-reuse")["items"]
    assert sorted(p["status"] for p in items) == ["approved", "rejected", "rejected"]


def test_the_persons_input_replaces_the_models_whole(server):
    async def ask(edits):
        async with AsyncAssent() as a:
            server.decide_next({"outcome": "approve", "edits": {"input": edits}})
            return await can_use_tool(a, timeout=30)("Bash", {"command": "rm -r build", "recursive": True}, None)

    deleted = asyncio.run(ask({"command": "rm build"}))
    assert deleted.behavior == "allow" and deleted.updated_input == {"command": "rm build"}
    added = asyncio.run(ask({"command": "rm -r build", "recursive": True, "dry_run": True}))
    assert added.updated_input == {"command": "rm -r build", "recursive": True, "dry_run": True}
    changed = asyncio.run(ask({"command": "ls build", "recursive": False}))
    assert changed.updated_input == {"command": "ls build", "recursive": False}
    not_an_input = asyncio.run(ask("ls"))
    assert not_an_input.behavior == "deny", "an input that is not an object never falls back to the model's"
