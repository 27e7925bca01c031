"""A real Assent server per test (`assent serve` on a temporary home, the binary in
`ASSENT_BIN`), and the person: decisions made through the owner API, as the app makes them."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest


class Server:
    def __init__(self, home: Path):
        home.mkdir(parents=True)
        self.home = home
        env = {**os.environ, "ASSENT_OWNER_CREDENTIAL": "file"}
        env.pop("ASSENT_URL", None)
        env.pop("ASSENT_TOKEN", None)
        self.proc = subprocess.Popen([os.environ["ASSENT_BIN"], "--home", str(home), "serve", "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=open(home / "server.log", "w"), env=env, text=True)
        line = self.proc.stdout.readline()
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self.url = next(w for w in line.split() if w.startswith("http://")).removesuffix("/v1")
        self.owner = (home / "owner.token").read_text().strip()

    def owner_call(self, method: str, path: str, body: dict | None = None) -> dict:
        req = urllib.request.Request(f"{self.url}/v1{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"authorization": f"Bearer {self.owner}", "content-type": "application/json"})
        with urllib.request.urlopen(req) as res:
            return json.loads(res.read())

    def pending(self, timeout: float = 20) -> dict:
        """The first proposal waiting for the person, once there is one."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            items = self.owner_call("GET", "/proposals?status=pending")["items"]
            if items:
                return items[0]
            time.sleep(0.05)
        raise AssertionError("nothing became pending")

    def decide_in_turn(self, decisions: list[dict]) -> threading.Thread:
        """Decides proposals as they arrive, each with the next of `decisions`, from another
        thread (the person)."""
        def run():
            done: set[str] = set()
            for d in decisions:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    fresh = [p for p in self.owner_call("GET", "/proposals?status=pending")["items"] if p["id"] not in done]
                    if fresh:
                        done.add(fresh[-1]["id"])
                        self.owner_call("POST", f"/proposals/{fresh[-1]['id']}/decision", d)
                        break
                    time.sleep(0.05)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def decide_next(self, decision: dict) -> threading.Thread:
        """Decides the next pending proposal with `decision`, from another thread (the person)."""
        def run():
            p = self.pending()
            self.owner_call("POST", f"/proposals/{p['id']}/decision", decision)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def decide_slowly(self, n: int, after: float, decision: dict | None = None) -> threading.Thread:
        """Once `n` proposals are pending, lets `after` seconds pass, then decides them all
        (oldest first) with `decision` (an approval unless given), from another thread: a
        person who takes their time over a whole turn."""
        def run():
            deadline = time.monotonic() + 30
            while len(items := self.owner_call("GET", "/proposals?status=pending")["items"]) < n:
                assert time.monotonic() < deadline, "the turn's proposals never all became pending"
                time.sleep(0.05)
            time.sleep(after)
            for p in reversed(items):
                self.owner_call("POST", f"/proposals/{p['id']}/decision", decision or {"outcome": "approve"})
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    s = Server(tmp_path / "home")
    monkeypatch.setenv("ASSENT_HOME", str(s.home))
    monkeypatch.delenv("ASSENT_URL", raising=False)
    monkeypatch.delenv("ASSENT_TOKEN", raising=False)
    yield s
    s.stop()
