"""The Claude Agent SDK: Assent answers `can_use_tool`.

Every tool call Claude Code would ask permission for is filed as a `tool.call` proposal; the
person's approval allows it with the input they approved (their edits included), a rejection or
a request for changes denies it with their words for the model, and no decision in time denies
it and withdraws the proposal. When Assent cannot be reached the call is denied: nothing runs
without a decision.

    from claude_agent_sdk import ClaudeAgentOptions, query
    from assent.adapters.claude_agent_sdk import can_use_tool

    options = ClaudeAgentOptions(can_use_tool=can_use_tool())
    async for message in query(prompt=stream_of_prompts, options=options): ...
"""

from __future__ import annotations

import json
from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

from ..client import AsyncAssent
from ..errors import AssentError, NotApproved
from ..gated import outcome
from ._common import CallKeys


def can_use_tool(client: AsyncAssent | None = None, *, timeout: float = 3600, session_id: str | None = None,
                 audience: str | None = None) -> Any:
    """A `can_use_tool` callback that asks the person in Assent. Make one for each `query` (or
    client session): its proposals' idempotency keys are the tool-use id under a random key of
    its own, so a model that reuses ids never gets another run's decision."""
    keys = CallKeys("claude-agent-sdk")

    async def decide(tool_name: str, tool_input: dict, context: Any) -> Any:
        c = client or AsyncAssent()
        use_id = getattr(context, "tool_use_id", None)
        try:
            p = await c.propose_tool(tool_name, tool_input, session_id=session_id, audience=audience, lease_secs=15,
                                     idempotency_key=keys.key(use_id))
            done = await c.wait(p.id, timeout, withdraw_on_timeout=True)
        except AssentError as e:
            return PermissionResultDeny(message=f"Assent could not ask the person ({e}); denied for safety")
        keys.done(use_id)
        try:
            approved = outcome(done)
        except NotApproved as e:
            return PermissionResultDeny(message=str(e))
        if not isinstance(approved, dict):
            return PermissionResultDeny(message=f"The person approved this only with the input {json.dumps(approved)}, "
                                        "which is not a tool's input: it did not run")
        # The person's input whole, never merged with the model's: what runs is what they approved.
        return PermissionResultAllow(updated_input=approved)

    return decide
