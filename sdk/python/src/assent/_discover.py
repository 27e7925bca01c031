"""Finding Assent the way its command line does: the home's `server.json` and `agent.token` (the
home is `ASSENT_HOME`, else the platform's data directory), and a proof from the server (`GET
/v1/hello`, under the key in `server.json`) before any token is sent. `ASSENT_TOKEN` replaces
`agent.token`; `ASSENT_URL` names the server, which must still prove itself: with the key in its
home's `server.json`, or `ASSENT_PROOF_KEY`."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import AssentNotRunning, Impostor, NoProofKey


def home_dir() -> Path:
    """`ASSENT_HOME`, else where Assent keeps its data on this platform."""
    if os.environ.get("ASSENT_HOME"):
        return Path(os.environ["ASSENT_HOME"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "assent"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home())) / "assent"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "assent"


@dataclass(frozen=True)
class Endpoint:
    url: str
    token: str
    proof_key: bytes


def discover(url: str | None = None, token: str | None = None, home: str | os.PathLike | None = None) -> Endpoint:
    """Where Assent is, the agent token to use and the key the server proves itself with.
    Raises AssentNotRunning when neither the arguments, the environment nor the home say where
    it is or give a token, and NoProofKey when nothing gives the key of the server named."""
    home_path = Path(home) if home else home_dir()
    server: dict = {}
    try:
        server = json.loads((home_path / "server.json").read_text())
    except (OSError, ValueError):
        pass
    if not isinstance(server, dict):
        server = {}
    url = url or os.environ.get("ASSENT_URL") or server.get("url")
    if not url:
        raise AssentNotRunning(f"Assent is not running (no server.json in {home_path}; start the app or `assent serve`)")
    url = url.rstrip("/")
    token = token or os.environ.get("ASSENT_TOKEN", "").strip()
    if not token:
        try:
            token = (home_path / "agent.token").read_text().strip()
        except OSError:
            raise AssentNotRunning(f"no agent token: set ASSENT_TOKEN, or run Assent once in {home_path}") from None
    return Endpoint(url=url, token=token, proof_key=_proof_key(url, home_path, server))


def _proof_key(url: str, home: Path, server: dict) -> bytes:
    """The key the server at `url` proves itself with: `ASSENT_PROOF_KEY`, else the home's
    `server.json`'s when it is that server's. NoProofKey, saying what is missing, otherwise: a
    URL alone proves nothing, and no token goes to a server that has proved nothing."""
    def missing(what: str) -> NoProofKey:
        return NoProofKey(f"nothing to prove that {url} is Assent with: {what}. Set ASSENT_HOME to that server's "
                          "home (its server.json holds the key), or ASSENT_PROOF_KEY to the proof_key in that "
                          "server.json; no token was sent")

    key = os.environ.get("ASSENT_PROOF_KEY", "").strip()
    if key:
        where = "ASSENT_PROOF_KEY"
    elif not server:
        raise missing(f"no server.json in {home}")
    elif str(server.get("url") or "").rstrip("/") != url:
        raise missing(f"the server.json in {home} is for {server.get('url')}, not {url}")
    else:
        key, where = server.get("proof_key") or "", f"the server.json in {home}"
    try:
        proof_key = bytes.fromhex(key) if isinstance(key, str) else b""
    except ValueError:
        proof_key = b""
    if not proof_key:
        raise missing(f"{where} has no proof_key in hex")
    return proof_key


def challenge() -> str:
    return secrets.token_hex(24)


def check_proof(ep: Endpoint, challenge: str, answer: object) -> None:
    """Raises Impostor unless `answer` (the JSON of `GET /v1/hello`) proves the server holds the
    home's key."""
    proof = answer.get("proof") if isinstance(answer, dict) else None
    if not ep.proof_key or not isinstance(proof, str):
        raise Impostor(f"the program at {ep.url} could not prove it is Assent; no token was sent to it")
    want = hmac.new(ep.proof_key, f"assent-server-proof\n{challenge}".encode(), hashlib.sha256).digest()
    try:
        ok = hmac.compare_digest(want, bytes.fromhex(proof))
    except ValueError:
        ok = False
    if not ok:
        raise Impostor(f"the program at {ep.url} could not prove it is Assent; no token was sent to it")
