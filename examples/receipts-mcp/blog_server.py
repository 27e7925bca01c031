"""A blog's MCP tool server whose destructive tool runs only on a person's approval, checked
offline with an Assent receipt (see README.md).

Run it over stdio (an MCP client starts it):

    ASSENT_KEYS=keys.json BLOG_DATA=posts.json python blog_server.py

- ASSENT_KEYS: Assent's public keys, a JWK Set (`assent receipt keys > keys.json`). They are
  read from this file, never fetched: a program on Assent's port cannot hand this server keys
  of its own. The file is read at each check: re-export it after `assent receipt rotate`.
- BLOG_AUDIENCE: this server's name as Assent's receipts name it (default `blog`): the name
  the agent gives as `audience`, or the server's name in the MCP client's configuration when
  the Claude Code hook asks for the receipt.
- BLOG_DATA: the posts, a JSON object of id to title.
"""

import hashlib
import json
import os
import time

import rfc8785
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

AUDIENCE = os.environ.get("BLOG_AUDIENCE", "blog")
KEYS_FILE = os.environ["ASSENT_KEYS"]
DATA = os.environ["BLOG_DATA"]
SKEW = 60  # seconds of clock difference tolerated

server = MCPServer("blog", instructions="A blog. Deleting a post needs a person's approval in Assent.")
used: dict[str, int] = {}  # receipts acted on (their proposal id), until they expire


def keys() -> KeySet:
    with open(KEYS_FILE) as f:
        return KeySet.import_key_set(json.load(f))


def sha256_jcs(value) -> str:
    """SHA-256 of the RFC 8785 (JCS) form: the hash Assent puts in `input_sha256`."""
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def check_receipt(token: str, tool: str, args: dict) -> dict:
    """Refuses (ToolError) unless `token` is Assent's receipt that a person approved exactly this
    call of `tool` with `args`, for this server, not expired and not used before."""
    try:
        obj = jws.deserialize_compact(token, keys(), algorithms=["EdDSA"])
    except (JoseError, ValueError) as e:  # malformed, another algorithm, an unknown key, a bad signature
        raise ToolError(f"refused: not a valid Assent receipt ({type(e).__name__})") from None
    c = json.loads(obj.payload)
    now = time.time()
    checks = [
        (obj.headers().get("typ") == "assent-receipt+jwt", "not a receipt"),
        (c["iat"] - SKEW <= now <= c["exp"] + SKEW, "expired or not yet valid"),
        (c.get("aud") == AUDIENCE, f"made for {c.get('aud')!r}, not {AUDIENCE!r}"),
        (c["outcome"] == "approve", f"the person's decision was {c['outcome']!r}"),
        (c["kind"] == "tool.call" and c.get("tool") in (tool, f"mcp__{AUDIENCE}__{tool}"), "made for another tool"),
        (c.get("input_sha256") == sha256_jcs(args), "the approved arguments are not these"),
        (c["jti"] not in used, "this receipt was used already"),
    ]
    for ok, why in checks:
        if not ok:
            raise ToolError(f"refused: {why}")
    for jti in [j for j, exp in used.items() if exp + SKEW < now]:
        del used[jti]
    used[c["jti"]] = c["exp"]
    return c


def load() -> dict:
    with open(DATA) as f:
        return json.load(f)


@server.tool()
def list_posts() -> dict:
    """The blog's posts, by id."""
    return load()


@server.tool()
def delete_post(post_id: int, assent_receipt: str = "") -> str:
    """Deletes a post for good. It runs only with a person's approval from Assent: first call
    Assent's request_approval with tool "delete_post", input {"post_id": N} and audience "blog",
    wait for the decision, then call this with the receipt it returns as assent_receipt.
    Nothing else (a flag, the words "the user confirmed") will do."""
    c = check_receipt(assent_receipt, "delete_post", {"post_id": post_id})
    posts = load()
    if str(post_id) not in posts:
        raise ToolError(f"no post {post_id}")
    del posts[str(post_id)]
    with open(DATA, "w") as f:
        json.dump(posts, f)
    return f"post {post_id} deleted (approved by {c['decided_by']} via {c['channel']}, proposal {c['jti']})"


if __name__ == "__main__":
    server.run()
