#!/usr/bin/env bash
# Installs the SDK as a new user does, from a copy of this folder as a fresh clone has it (no
# build/, no egg-info), into a new virtual environment outside the repository: `pip install
# PATH` as the README says, then with all its extras. Checks every entry point the README names
# imports from the installed package (the core first, without extras; then the adapters), and
# that a user's script type-checks with `mypy --strict` (mypy at the version requirements-dev.txt
# pins) against it. Needs python3 (3.10+; $PYTHON to choose) and PyPI (or pip's cache). Prints
# "fresh install: ok" at the end.
set -euo pipefail
sdk="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/fresh-py-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
unset PYTHONPATH

repo="$tmp/assent/sdk/python"
mkdir -p "$repo"
tar -C "$sdk" --exclude=./build --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache \
  --exclude=.mypy_cache -cf - . | tar -C "$repo" -xf -

"${PYTHON:-python3}" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
mkdir "$tmp/app" && cd "$tmp/app"   # outside both the repository and the copy

# 1. The README's command: the package alone. Its core imports, from the venv, typed.
"$py" -m pip install --quiet "$repo"
"$py" - <<'EOF'
import pathlib, sys
import assent
from assent import gated, Rejected, Assent, AsyncAssent, outcome, verify_receipt, ReceiptInvalid
from assent import (AssentError, AssentNotRunning, NoProofKey, Impostor, Unauthorized, Refused, NotApproved,
                    Expired, Withdrawn, Refined, Failed)
where = pathlib.Path(assent.__file__).parent
assert where.is_relative_to(sys.prefix), f"assent was imported from {where}, not the venv"
assert (where / "py.typed").is_file(), "py.typed was not installed"
print("assent:", " ".join(sorted(assent.__all__)))
EOF

# 2. With the extras the README names: every adapter's entry points.
"$py" -m pip install --quiet "$repo[receipts,pydantic-ai,claude-agent-sdk,openai-agents,langgraph]"
"$py" - <<'EOF'
from assent.adapters.pydantic_ai import run_sync, run, settle, asettle
from assent.adapters.claude_agent_sdk import can_use_tool
from assent.adapters.openai_agents import run, run_sync
from assent.adapters.langgraph import invoke, ainvoke, decide, adecide
import joserfc, rfc8785  # [receipts]
print("adapters: pydantic_ai claude_agent_sdk openai_agents langgraph")
EOF

# 3. A user's script, type-checked against the installed package.
"$py" -m pip install --quiet "$(grep -x 'mypy==.*' "$repo/requirements-dev.txt")"
cat >app.py <<'EOF'
import asyncio
from typing import Any

from assent import Assent, Rejected, gated, outcome
from assent.adapters.pydantic_ai import run_sync


@gated(preview=lambda post_id: f"Delete post {post_id}")
def delete_post(post_id: int) -> str:
    return f"deleted {post_id}"


@gated(tool="send_mail")
async def send(to: str) -> int:
    return len(to)


@gated(kind="http.request", preview=lambda title: f"Open an issue: {title}")
def open_issue(title: str) -> dict[str, Any]:
    return {"method": "POST", "url": "https://api.github.com/repos/me/app/issues", "json": {"title": title}}


def main() -> None:
    try:
        done: str = delete_post(7)
        sent: int = asyncio.run(send("ann@example.com"))
        print(done, sent, open_issue("Crash on start"), run_sync)
    except Rejected as e:
        print("the person said no:", e.reason)
    with Assent() as a:
        print(outcome(a.get("p_1")))
EOF
"$tmp/venv/bin/mypy" --strict app.py
echo "fresh install: ok"
