"""A user's script that imports the SDK type-checks under `mypy --strict`: the package says it is
typed (`py.typed`), and `gated` keeps the function's parameters and return type."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import assent

SCRIPT = '''
import asyncio
from typing import Any

from assent import Assent, AsyncAssent, Expired, Rejected, Withdrawn, gated, outcome, verify_receipt


@gated(preview=lambda post_id, force=False: f"Delete post {post_id}")
def delete_post(post_id: int, force: bool = False) -> str:
    return f"deleted {post_id}"


@gated
async def send(to: str, *, body: str) -> int:
    return len(body)


@gated(kind="http.request", preview=lambda title: f"Open an issue: {title}")
def open_issue(title: str) -> dict[str, Any]:
    return {"method": "POST", "url": "https://example.com/issues", "json": {"title": title}}


@gated(requires_approval=False)
def read(x: int) -> list[int]:
    return [x]


def main() -> None:
    try:
        done: str = delete_post(7, force=True)
        sent: int = asyncio.run(send("ann@example.com", body="hi"))
        print(done.upper(), sent + 1, open_issue("Crash"), read(1)[0])
    except (Rejected, Expired, Withdrawn) as e:
        print(e.proposal_id)
    with Assent() as a:
        p = a.wait(a.propose_tool("deploy", {"env": "prod"}).id, timeout=600, withdraw_on_timeout=True)
        print(outcome(p), verify_receipt((p.decision.receipt if p.decision else None) or "", a.keys()))


async def amain() -> None:
    async with AsyncAssent() as a:
        print((await a.get("p_1")).status)

reveal_type(delete_post)
reveal_type(send)
'''

MISUSE = '''
from assent import gated


@gated(preview=lambda post_id: f"Delete post {post_id}")
def delete_post(post_id: int) -> str:
    return f"deleted {post_id}"


n: int = delete_post(7)
delete_post("seven")
'''


def mypy(tmp_path: Path, source: str) -> tuple[int, str]:
    (tmp_path / "app.py").write_text(source)
    # From another folder, so the SDK is found as installed, as a user's script finds it.
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "app.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def test_the_package_is_typed():
    assert (Path(assent.__file__).parent / "py.typed").is_file()


def test_a_users_script_passes_mypy_strict_and_gated_keeps_the_functions_types(tmp_path):
    code, out = mypy(tmp_path, SCRIPT)
    assert code == 0, out
    assert 'Revealed type is "def (post_id: int, force: bool =) -> str"' in out, out
    assert 'Revealed type is "def (to: str, *, body: str) -> typing.Coroutine[Any, Any, int]"' in out, out


def test_mypy_catches_a_gated_function_called_or_used_wrongly(tmp_path):
    code, out = mypy(tmp_path, MISUSE)
    assert code == 1, out
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in out, out
    assert 'Argument 1 to "delete_post" has incompatible type "str"; expected "int"' in out, out
