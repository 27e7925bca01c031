# Generated from docs/openapi.json by sdk/python/generate.sh: do not edit.

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    SecretStr,
    StringConstraints,
)
from typing_extensions import TypeAliasType


class AgentToken(BaseModel):
    name: Annotated[str, Field(description="The agent.")]
    token: Annotated[
        str, Field(description="Its token: shown here once, stored only as a hash.")
    ]


class AllowSimilar(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until the rule expires, 1 to 31,622,400 (none: until removed).",
            ge=1,
            le=31622400,
        ),
    ] = None


class Channel(Enum):
    app = "app"
    notification = "notification"
    cli = "cli"
    api = "api"
    rule = "rule"
    system = "system"
    agent = "agent"
    remote = "remote"


class Confine(Enum):
    read = "read"
    workspace = "workspace"


class Outcome1(Enum):
    approve = "approve"


class Outcome2(Enum):
    reject = "reject"


class Outcome3(Enum):
    refine = "refine"


class Effect(Enum):
    allow = "allow"
    ask = "ask"
    deny = "deny"


class Enable(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    origin: Annotated[
        str | None,
        Field(
            description="The origin the phone opens: `https://HOST[:PORT]` with no path (the name of the tunnel\nthat reaches this machine). Left out: the one set before.",
            examples=["https://desk.example-tailnet.ts.net"],
        ),
    ] = None
    port: Annotated[
        int | None,
        Field(
            description="The loopback port to listen on (left out: the one used before, else 4518; 0 picks a\nfree one).",
            ge=0,
        ),
    ] = None
    push_after: Annotated[
        int | None,
        Field(
            description="Seconds a proposal may wait before paired phones are pushed (0: at once; left out: as\nbefore, else 60; at most a day).",
            ge=0,
            le=86400,
        ),
    ] = None
    ntfy: Annotated[
        str | None,
        Field(
            description='An ntfy topic to push to as well, `https://HOST/TOPIC` (`""` stops it; left out: as\nbefore). A push says how many proposals wait, nothing else.'
        ),
    ] = None


class ErrorInfo(BaseModel):
    code: Annotated[
        str, Field(description="Stable code (`stale`, `credential_unavailable`, ...).")
    ]
    message: Annotated[str, Field(description="Human-readable explanation.")]


class Type(Enum):
    proposal_created = "proposal.created"


class Type1(Enum):
    proposal_updated = "proposal.updated"


class Type2(Enum):
    rules_changed = "rules.changed"


class Event3(BaseModel):
    rule_id: Annotated[str, Field(description="The rule.")]
    type: Type2


class FileDelete(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    path: Annotated[
        str,
        Field(
            description="The real, absolute path of an existing regular file to delete, where a file.write may write.",
            min_length=1,
        ),
    ]


class FileWrite(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    path: Annotated[
        str,
        Field(
            description="The real, absolute path of the file to write: its folder exists, it is not a folder, a link or a special file, and it is outside Assent's home, ~/.ssh, ~/.gnupg, keychain files, /proc, /sys, /dev and the configured protected paths (and inside the allowed roots, when configured).",
            min_length=1,
        ),
    ]
    content: Annotated[str, Field(description="The new content.")]


class Found(BaseModel):
    codepoint: Annotated[str, Field(description="`U+202E`.")]
    name: Annotated[str, Field(description="`RIGHT-TO-LEFT OVERRIDE`.")]
    count: Annotated[int, Field(description="How many times it occurs.", ge=0)]


class HeaderLine(BaseModel):
    name: Annotated[str, Field(description="The name, hidden characters made visible.")]
    value: Annotated[
        str, Field(description="The value, hidden characters made visible.")
    ]
    changes_meaning: Annotated[
        bool | None,
        Field(description="A header many servers read as a different method or host."),
    ] = None


class Health(BaseModel):
    status: Annotated[str, Field(description="Always `ok`.", examples=["ok"])]
    version: Annotated[
        str, Field(description="The server's version.", examples=["0.1.0"])
    ]


class HttpPreview(BaseModel):
    method: Annotated[str, Field(description="The method on the request line.")]
    url: Annotated[str, Field(description="The full URL.")]
    scheme: Annotated[str | None, Field(description="Its scheme.")] = None
    host: Annotated[str | None, Field(description="Its host.")] = None
    port: Annotated[
        int | None,
        Field(description="Its port (the scheme's default when none is given).", ge=0),
    ] = None
    path: Annotated[str | None, Field(description="Its path, percent-encoded.")] = None
    query: Annotated[str | None, Field(description="Its query.")] = None
    header_names: Annotated[
        list[str] | None, Field(description="Header names, lower case.")
    ] = None
    headers: Annotated[
        list[HeaderLine] | None, Field(description="Headers as shown.")
    ] = None
    effective_method: Annotated[
        str | None,
        Field(description="The method a server may act on (an override header wins)."),
    ] = None
    body_kind: Annotated[str | None, Field(description="`json`, `text` or `none`.")] = (
        None
    )
    body: Annotated[str | None, Field(description="The body as shown.")] = None
    credential: Annotated[
        str | None, Field(description="The credential Assent injects, by name.")
    ] = None
    credential_scheme: Annotated[
        str | None, Field(description="How it is injected.")
    ] = None
    credential_origins: Annotated[
        list[str] | None, Field(description="Where it may be sent.")
    ] = None
    invisible_characters: Annotated[
        list[Found] | None,
        Field(description="Hidden characters found anywhere in the payload."),
    ] = None
    destructive: Annotated[
        bool | None, Field(description="A DELETE (by method or override).")
    ] = None
    content_pruned: Annotated[
        bool | None,
        Field(description="Set when the content was pruned after the retention."),
    ] = None


HeadersAdditionalProperty = TypeAliasType(
    "HeadersAdditionalProperty",
    Annotated[str, Field(max_length=8192, pattern="^[^\\r\\n\\u0000]*$")],
)


class HttpRequest1(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        regex_engine="python-re",
    )
    method: Annotated[
        str,
        Field(
            description="GET, HEAD, POST, PUT, PATCH or DELETE (in any case).",
            pattern="^(?:[Gg][Ee][Tt]|[Hh][Ee][Aa][Dd]|[Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee])$",
        ),
    ]
    url: Annotated[
        str,
        Field(
            description="The full URL: https, with a host and no user name or password in it (plain http only to a loopback origin the named credential allows).",
            min_length=1,
        ),
    ]
    headers: Annotated[
        dict[
            Annotated[
                str,
                StringConstraints(
                    pattern=r"^(?!(?:[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Pp][Rr][Oo][Xx][Yy]\-[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Cc][Oo][Oo][Kk][Ii][Ee]|[Hh][Oo][Ss][Tt]|[Cc][Oo][Nn][Tt][Ee][Nn][Tt]\-[Ll][Ee][Nn][Gg][Tt][Hh]|[Tt][Rr][Aa][Nn][Ss][Ff][Ee][Rr]\-[Ee][Nn][Cc][Oo][Dd][Ii][Nn][Gg]|[Cc][Oo][Nn][Nn][Ee][Cc][Tt][Ii][Oo][Nn]|[Ii][Dd][Ee][Mm][Pp][Oo][Tt][Ee][Nn][Cc][Yy]\-[Kk][Ee][Yy]|[Uu][Pp][Gg][Rr][Aa][Dd][Ee]|[Aa][Ss][Ss][Ee][Nn][Tt]\-[Rr][Ee][Cc][Ee][Ii][Pp][Tt])$)[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,128}$"
                ),
            ],
            HeadersAdditionalProperty,
        ]
        | None,
        Field(
            description="Headers (names in any case, stored lower case; values of at most 8,192 characters without line breaks), never a credential: names Assent sets itself are refused."
        ),
    ] = None
    json_: Annotated[Any | None, Field(alias="json", description="A JSON body.")] = None
    credential: Annotated[
        str | None,
        Field(
            description="The name of a credential Assent holds (404 `unknown_credential` if none has it), allowed for the URL's origin; Assent injects its secret.",
            min_length=1,
        ),
    ] = None


class HttpRequest2(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        regex_engine="python-re",
    )
    method: Annotated[
        str,
        Field(
            description="GET, HEAD, POST, PUT, PATCH or DELETE (in any case).",
            pattern="^(?:[Gg][Ee][Tt]|[Hh][Ee][Aa][Dd]|[Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee])$",
        ),
    ]
    url: Annotated[
        str,
        Field(
            description="The full URL: https, with a host and no user name or password in it (plain http only to a loopback origin the named credential allows).",
            min_length=1,
        ),
    ]
    headers: Annotated[
        dict[
            Annotated[
                str,
                StringConstraints(
                    pattern=r"^(?!(?:[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Pp][Rr][Oo][Xx][Yy]\-[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Cc][Oo][Oo][Kk][Ii][Ee]|[Hh][Oo][Ss][Tt]|[Cc][Oo][Nn][Tt][Ee][Nn][Tt]\-[Ll][Ee][Nn][Gg][Tt][Hh]|[Tt][Rr][Aa][Nn][Ss][Ff][Ee][Rr]\-[Ee][Nn][Cc][Oo][Dd][Ii][Nn][Gg]|[Cc][Oo][Nn][Nn][Ee][Cc][Tt][Ii][Oo][Nn]|[Ii][Dd][Ee][Mm][Pp][Oo][Tt][Ee][Nn][Cc][Yy]\-[Kk][Ee][Yy]|[Uu][Pp][Gg][Rr][Aa][Dd][Ee]|[Aa][Ss][Ss][Ee][Nn][Tt]\-[Rr][Ee][Cc][Ee][Ii][Pp][Tt])$)[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,128}$"
                ),
            ],
            HeadersAdditionalProperty,
        ]
        | None,
        Field(
            description="Headers (names in any case, stored lower case; values of at most 8,192 characters without line breaks), never a credential: names Assent sets itself are refused."
        ),
    ] = None
    body: Annotated[str | None, Field(description="A text body.")] = None
    credential: Annotated[
        str | None,
        Field(
            description="The name of a credential Assent holds (404 `unknown_credential` if none has it), allowed for the URL's origin; Assent injects its secret.",
            min_length=1,
        ),
    ] = None


class HttpRequest(RootModel[HttpRequest1 | HttpRequest2]):
    root: Annotated[
        HttpRequest1 | HttpRequest2,
        Field(
            description="`http.request`: a call Assent sends, with a credential it injects."
        ),
    ]


class ItemResult(Enum):
    decided = "decided"
    skipped = "skipped"
    error = "error"


class KeySetDoc(BaseModel):
    keys: Annotated[
        list[Any],
        Field(
            description="Ed25519 keys as JWKs (`kty` OKP, `crv` Ed25519, `x`, `kid`, `alg` EdDSA, `use` sig): every\nnode's current key, and keys retired while receipts they signed are still valid."
        ),
    ]


class Line(BaseModel):
    tag: Annotated[str, Field(description='`" "` context, `"-"` removed, `"+"` added.')]
    old: Annotated[
        int | None, Field(description="Its number in the current file.", ge=0)
    ] = None
    new: Annotated[
        int | None, Field(description="Its number in the new content.", ge=0)
    ] = None
    text: Annotated[
        str,
        Field(
            description="The text as shown: no line ending, clipped, hidden characters made visible."
        ),
    ]
    clipped: Annotated[
        bool | None, Field(description="Longer than a preview shows.")
    ] = None
    flagged: Annotated[bool | None, Field(description="Has hidden characters.")] = None


class NewAgent(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    name: Annotated[
        str,
        Field(
            description="1 to 64 of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or digit.",
            pattern="^[a-z0-9][a-z0-9._-]{0,63}$",
        ),
    ]
    reuse: Annotated[
        bool | None, Field(description="Give a revoked agent's name a new token.")
    ] = None


class NewBatch(BaseModel):
    items: Annotated[
        list[Any],
        Field(
            description="1 to 100 proposals, each as `POST /v1/proposals` takes it (a `NewProposal`; its\n`group_id` left out, or the batch's). Each item is checked on its own: one that is not a\nproposal Assent takes (any JSON value) is refused alone, in its `items[i].error`, and the\nothers are filed.",
            max_length=100,
            min_length=1,
        ),
    ]
    group_id: Annotated[
        str | None,
        Field(
            description="The group they are filed in (left out: a new one), decided together in the inbox.",
            max_length=200,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None


class NewCredential(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    name: Annotated[
        str,
        Field(
            description="1 to 64 of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or digit.",
            pattern="^[a-z0-9][a-z0-9._-]{0,63}$",
        ),
    ]
    scheme: Annotated[
        str | None,
        Field(
            description="`bearer` (the default), `basic`, or `header:NAME`.",
            pattern="^(?:bearer|basic|header:[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128})$",
        ),
    ] = "bearer"
    hosts: Annotated[
        list[str],
        Field(
            description="The hosts or origins it may be sent to: each a host name or address (HTTPS on 443), or an origin `https://host:port` (`http://` only for a loopback host), with no path.",
            min_length=1,
        ),
    ]
    secret: Annotated[
        SecretStr,
        Field(
            description="The secret: it goes to the system keychain and is never returned. 1 to 16,384\ncharacters on one line.",
            max_length=16384,
        ),
    ]


class NewPairing(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    name: Annotated[
        str | None,
        Field(
            description="The device's name, filled in on the phone (1-40 letters, digits, spaces and `' . _ -`)."
        ),
    ] = None


class Kind(Enum):
    tool_call = "tool.call"


class Kind1(Enum):
    file_write = "file.write"


class NewProposal2(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind1, Field(description="The kind of write.")]
    payload: Annotated[FileWrite, Field(description="The file.write payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None


class Kind2(Enum):
    file_delete = "file.delete"


class NewProposal3(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind2, Field(description="The kind of write.")]
    payload: Annotated[FileDelete, Field(description="The file.delete payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None


class Kind3(Enum):
    http_request = "http.request"


class NewProposal4(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind3, Field(description="The kind of write.")]
    payload: Annotated[HttpRequest, Field(description="The http.request payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None


class Outcome(Enum):
    approve = "approve"
    reject = "reject"
    refine = "refine"


class Type3(Enum):
    tool_call = "tool.call"


class Type4(Enum):
    file_write = "file.write"


class Type5(Enum):
    file_delete = "file.delete"


class Type6(Enum):
    http_request = "http.request"


class Preview4(HttpPreview):
    type: Type6


class Type7(Enum):
    unreadable = "unreadable"


class Preview5(BaseModel):
    raw: Annotated[Any, Field(description="The stored JSON.")]
    type: Type7


class Proof(BaseModel):
    server: Annotated[str, Field(description="Always `assent`.", examples=["assent"])]
    proof: Annotated[
        str,
        Field(
            description="HMAC-SHA256 of the challenge under the key in the home's `server.json`, in hex."
        ),
    ]


class RemoteStatus(BaseModel):
    enabled: Annotated[bool, Field(description="Whether it runs.")]
    origin: Annotated[
        str | None,
        Field(description="The origin it answers (also kept while it is off)."),
    ] = None
    address: Annotated[
        str | None,
        Field(
            description="`127.0.0.1:PORT`, where the tunnel must point, while it runs."
        ),
    ] = None
    devices: Annotated[int, Field(description="Devices paired and not revoked.", ge=0)]
    subscribed: Annotated[
        int, Field(description="Of them, those that asked for pushes.", ge=0)
    ]
    push_after: Annotated[
        int,
        Field(
            description="Seconds a proposal waits before the phones are pushed (0: at once).",
            ge=0,
        ),
    ]
    ntfy: Annotated[
        str | None, Field(description="The ntfy topic pushed to as well.")
    ] = None


class RuleRef(BaseModel):
    id: Annotated[str, Field(description="The rule's id.")]
    description: Annotated[str, Field(description="The rule in plain words.")]


class Kind4(Enum):
    tool_call = "tool.call"


class Kind5(Enum):
    file_write = "file.write"


class RuleTest2(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind5, Field(description="The kind of write.")]
    payload: Annotated[FileWrite, Field(description="The file.write payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    agent: Annotated[
        str | None,
        Field(description="The agent that would send it (`default` when left out)."),
    ] = None


class Kind6(Enum):
    file_delete = "file.delete"


class RuleTest3(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind6, Field(description="The kind of write.")]
    payload: Annotated[FileDelete, Field(description="The file.delete payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    agent: Annotated[
        str | None,
        Field(description="The agent that would send it (`default` when left out)."),
    ] = None


class Kind7(Enum):
    http_request = "http.request"


class RuleTest4(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind7, Field(description="The kind of write.")]
    payload: Annotated[HttpRequest, Field(description="The http.request payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    agent: Annotated[
        str | None,
        Field(description="The agent that would send it (`default` when left out)."),
    ] = None


class RunIn(Enum):
    read = "read"
    workspace = "workspace"
    unconfined = "unconfined"


class Type8(Enum):
    bearer = "bearer"


class Scheme1(BaseModel):
    type: Type8


class Type9(Enum):
    basic = "basic"


class Scheme2(BaseModel):
    type: Type9


class Type10(Enum):
    header = "header"


class Scheme3(BaseModel):
    header: Annotated[str, Field(description="`<name>: <secret>`.")]
    type: Type10


class Scheme(RootModel[Scheme1 | Scheme2 | Scheme3]):
    root: Annotated[
        Scheme1 | Scheme2 | Scheme3,
        Field(description="How a secret is put on a request."),
    ]


class ScriptPin(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    file: Annotated[
        str,
        Field(
            description="The file (absolute): `package.json`, a `Makefile`, a `justfile`."
        ),
    ]
    sha256: Annotated[
        str,
        Field(
            description="SHA-256 (hex) of its content when the rule was saved, with what it runs of the project\nbeside it where it runs anything (the makefiles it includes, the tools its scripts name)."
        ),
    ]


ByStatusAdditionalProperty = TypeAliasType(
    "ByStatusAdditionalProperty", Annotated[int, Field(ge=0)]
)


class SessionCounts(BaseModel):
    session_id: Annotated[str, Field(description="The session.")]
    pending: Annotated[
        int, Field(description="How many still wait for a decision.", ge=0)
    ]
    total: Annotated[int, Field(description="How many in all.", ge=0)]
    by_status: Annotated[
        dict[str, ByStatusAdditionalProperty],
        Field(description="How many in each status (only the statuses it has)."),
    ]


class Stats(BaseModel):
    added: Annotated[int, Field(description="Added.", ge=0)]
    removed: Annotated[int, Field(description="Removed.", ge=0)]


class Status(Enum):
    pending = "pending"
    approved = "approved"
    applying = "applying"
    applied = "applied"
    failed = "failed"
    rejected = "rejected"
    refined = "refined"
    expired = "expired"
    withdrawn = "withdrawn"


class Timestamp(RootModel[AwareDatetime]):
    root: Annotated[
        AwareDatetime,
        Field(
            description="A point in time, in milliseconds since the Unix epoch (UTC)."
        ),
    ]


class Client(Enum):
    claude_code = "claude-code"
    cline = "cline"
    codex = "codex"
    copilot_cli = "copilot-cli"
    gemini_cli = "gemini-cli"
    opencode = "opencode"
    mcp_permission_prompt = "mcp-permission-prompt"
    mcp_proxy = "mcp-proxy"
    NoneType_None = None


class ToolCall(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    tool: Annotated[
        str,
        Field(
            description="The tool's name: printable ASCII, 1 to 200 characters (spaces around it are dropped).",
            pattern="^ *[!-~](?:[ -~]{0,198}[!-~])? *$",
        ),
    ]
    input: Annotated[
        Any | None,
        Field(
            description="Its input, as the agent gave it (an empty object when left out)."
        ),
    ] = None
    cwd: Annotated[
        str | None,
        Field(
            description='The folder the agent\'s session works in (absolute, with no control or invisible characters), when the client says: relative paths in the call resolve against it, and rules may say "inside the working folder".',
            max_length=4096,
            pattern="^/[^\\u0000-\\u001F\\u007F-\\u009F\\u00AD\\u034F\\u061C\\u115F-\\u1160\\u17B4-\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFF8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]*$",
        ),
    ] = None
    client: Annotated[
        Client | None,
        Field(
            description="The client the call came through, when it says: `claude-code`, `cline`, `codex`, `copilot-cli`, `gemini-cli` or `opencode` (their hooks), `mcp-permission-prompt` (`assent mcp`'s permission prompt tool), `mcp-proxy` (`assent mcp proxy`, in front of an MCP server). Assent's own notes on the call follow from it."
        ),
    ] = None
    permission_mode: Annotated[
        str | None,
        Field(
            description="The client's permission mode at the call, as it reports it (`default`, `auto`, ...).",
            pattern="^[A-Za-z0-9_-]{1,40}$",
        ),
    ] = None
    confinable: Annotated[
        bool | None,
        Field(
            description="The client runs the command confined when a rule allows it so (`assent run`, which\nAssent's Claude Code hook rewrites the call to): only then can a rule that confines\n(the built-in read-only rule) allow it. Left out: such rules ask.\n(`null` is taken as left out.)"
        ),
    ] = None


class ToolPreview(BaseModel):
    tool: Annotated[str, Field(description="The tool's name.")]
    input: Annotated[Any, Field(description="Its input as given.")]
    input_text: Annotated[
        str,
        Field(description="The input pretty-printed, hidden characters made visible."),
    ]
    invisible_characters: Annotated[
        list[Found] | None,
        Field(description="Hidden characters found anywhere in the payload."),
    ] = None
    content_pruned: Annotated[
        bool | None,
        Field(description="Set when the content was pruned after the retention."),
    ] = None
    cwd: Annotated[
        str | None, Field(description="The working folder, as the client reported it.")
    ] = None
    client: Annotated[
        str | None,
        Field(
            description="The client it came through, in words, as the client reported it."
        ),
    ] = None
    permission_mode: Annotated[
        str | None,
        Field(description="The client's permission mode, as it reported it."),
    ] = None
    runs_in: Confine | None = None
    reaches: Annotated[
        list[str] | None,
        Field(
            description="The hosts the box of `runs_in` reaches unless the person chooses otherwise (the\ndecision's `hosts`), as Assent's reader names them from the command and the project\n(`npm install`: the npm registry; `git push`: its remote's host), never from the agent's\nwords; the box's proxy lets through these alone. Empty: no network."
        ),
    ] = None
    notes: Annotated[
        list[str] | None,
        Field(
            description="Assent's own notes on the call (never the agent's words), such as what the client does\nwith an edited call."
        ),
    ] = None


class AgentInfo(BaseModel):
    name: Annotated[
        str, Field(description="Its name, which every proposal it makes carries.")
    ]
    created_at: Annotated[Timestamp, Field(description="When it was added.")]
    revoked_at: Timestamp | None = None


class AgentList(BaseModel):
    items: Annotated[
        list[AgentInfo], Field(description="Oldest first, revoked ones included.")
    ]


class AuditEntry(BaseModel):
    seq: Annotated[int, Field(description="Position in the log.")]
    proposal_id: Annotated[str, Field(description="The proposal.")]
    actor: Annotated[
        str,
        Field(
            description="Who (`owner` or the person's name, an agent's name, `assent`)."
        ),
    ]
    node: Annotated[
        str | None,
        Field(
            description="The node (Assent server) the change was made on, on a team store."
        ),
    ] = None
    channel: Annotated[Channel, Field(description="Through which channel.")]
    from_: Annotated[Status | None, Field(alias="from")] = None
    to: Annotated[Status, Field(description="Status after.")]
    at: Annotated[Timestamp, Field(description="When.")]
    detail: Annotated[
        Any | None,
        Field(description="Anything worth keeping (a reason, an error code)."),
    ] = None


class AuditPage(BaseModel):
    items: Annotated[list[AuditEntry], Field(description="In order.")]
    next_after: Annotated[
        int | None,
        Field(description="When the page is full: the `after` to ask for next."),
    ] = None


class AuditTrail(BaseModel):
    items: Annotated[list[AuditEntry], Field(description="Oldest first.")]


class BatchItem(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    outcome: Annotated[Outcome, Field(description="Approve, reject or refine.")]
    reason: Annotated[str | None, Field(description="Why.")] = None
    feedback: Annotated[str | None, Field(description="What to change (refine).")] = (
        None
    )
    edits: Annotated[
        Any | None,
        Field(
            description="Changes to the payload (approve only), in the kind's edit form."
        ),
    ] = None
    allow_similar: Annotated[
        dict[str, Any] | None,
        Field(
            description='Refused in a batch (that item\'s error): "allow similar" goes with the approval of one proposal.'
        ),
    ] = None
    seen: Annotated[
        str | None,
        Field(
            description="What the person was shown: the SHA-256 (hex) of the canonical payload of the proposal on\ntheir screen. A decision that names another proposal than the one shown is refused (409\n`not_what_was_shown`) and changes nothing. The app and the phone send it.",
            pattern="^[0-9a-f]{64}$",
        ),
    ] = None
    run: RunIn | None = None
    hosts: Annotated[
        list[str] | None,
        Field(
            description="The hosts an approved command's box reaches (approve only, a command run in a box): each\na host name (`registry.npmjs.org`; HTTPS, HTTP or git's port) or `host:port`, at most 16.\nNone: the hosts its preview names (`reaches`); `[]`: no network."
        ),
    ] = None
    id: Annotated[str, Field(description="The proposal's id.")]


class BatchItemResult(BaseModel):
    id: Annotated[str, Field(description="The proposal.")]
    result: Annotated[
        ItemResult,
        Field(
            description="`decided`, `skipped` (someone settled it first) or `error`."
        ),
    ]
    status: Status | None = None
    error: ErrorInfo | None = None


class BatchResult(BaseModel):
    results: Annotated[
        list[BatchItemResult], Field(description="Per item, in request order.")
    ]
    decided: Annotated[int, Field(description="How many were decided.", ge=0)]
    approved: Annotated[
        int,
        Field(
            description="Of those decided, how many are approved now (approved, applying or applied).",
            ge=0,
        ),
    ]
    rejected: Annotated[
        int, Field(description="Of those decided, how many are rejected.", ge=0)
    ]
    refined: Annotated[
        int,
        Field(
            description="Of those decided, how many the person asked to refine.", ge=0
        ),
    ]
    skipped: Annotated[
        int, Field(description="How many were already settled by someone else.", ge=0)
    ]
    failed: Annotated[
        int,
        Field(description="How many could not be decided (not found, invalid).", ge=0),
    ]


class CredentialMeta(BaseModel):
    name: Annotated[str, Field(description="Its name, which proposals use.")]
    scheme: Annotated[Scheme, Field(description="How it is put on a request.")]
    origins: Annotated[
        list[str],
        Field(description="The origins (`scheme://host:port`) it may be sent to."),
    ]
    created_at: Annotated[Timestamp, Field(description="When it was added.")]


class Decision(BaseModel):
    outcome: Annotated[Outcome, Field(description="What the person decided.")]
    reason: Annotated[
        str | None, Field(description="Why (shown to the agent on reject).")
    ] = None
    feedback: Annotated[str | None, Field(description="What to change (refine).")] = (
        None
    )
    edited_payload: Annotated[
        Any | None,
        Field(description="The payload as the person edited it, when they did."),
    ] = None
    approved_sha256: Annotated[
        str | None,
        Field(
            description="SHA-256 of the canonical JSON of the payload that was approved (edited or not)."
        ),
    ] = None
    by: Annotated[
        str,
        Field(
            description="Who decided (`owner`, the person's name on a team store, or `rule` when a rule did)."
        ),
    ]
    node: Annotated[
        str | None,
        Field(
            description="The node (Assent server) it was decided on, on a team store."
        ),
    ] = None
    rule: RuleRef | None = None
    confine: Confine | None = None
    hosts: Annotated[
        list[str] | None,
        Field(
            description="The hosts the box reaches, through the proxy Assent runs for the run (none: no\nnetwork). Its receipt says them too."
        ),
    ] = None
    channel: Annotated[Channel, Field(description="Through which channel.")]
    device: Annotated[
        str | None,
        Field(
            description="The paired device whose passkey signed it (channel `remote`)."
        ),
    ] = None
    receipt: Annotated[
        str | None,
        Field(
            description="The signed receipt of this decision (a compact JWS anyone can check with `GET /v1/keys`)."
        ),
    ] = None
    at: Annotated[Timestamp, Field(description="When.")]


class DecisionRequest1(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    outcome: Annotated[Outcome1, Field(description="The outcome.")]
    reason: Annotated[str | None, Field(description="Why.", max_length=10000)] = None
    feedback: Annotated[
        str | None, Field(description="What to change (refine).", max_length=10000)
    ] = None
    edits: Annotated[
        Any | None,
        Field(
            description="Changes to the payload (approve only), in the kind's edit form."
        ),
    ] = None
    allow_similar: AllowSimilar | None = None
    seen: Annotated[
        str | None,
        Field(
            description="What the person was shown: the SHA-256 (hex) of the canonical payload of the proposal on\ntheir screen. A decision that names another proposal than the one shown is refused (409\n`not_what_was_shown`) and changes nothing. The app and the phone send it.",
            pattern="^[0-9a-f]{64}$",
        ),
    ] = None
    run: RunIn | None = None
    hosts: Annotated[
        list[str] | None,
        Field(
            description="The hosts an approved command's box reaches (approve only, a command run in a box): each\na host name (`registry.npmjs.org`; HTTPS, HTTP or git's port) or `host:port`, at most 16.\nNone: the hosts its preview names (`reaches`); `[]`: no network."
        ),
    ] = None


class DecisionRequest2(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    outcome: Annotated[Outcome2, Field(description="The outcome.")]
    reason: Annotated[str | None, Field(description="Why.", max_length=10000)] = None
    feedback: Annotated[
        str | None, Field(description="What to change (refine).", max_length=10000)
    ] = None
    seen: Annotated[
        str | None,
        Field(
            description="What the person was shown: the SHA-256 (hex) of the canonical payload of the proposal on\ntheir screen. A decision that names another proposal than the one shown is refused (409\n`not_what_was_shown`) and changes nothing. The app and the phone send it.",
            pattern="^[0-9a-f]{64}$",
        ),
    ] = None
    run: RunIn | None = None
    hosts: Annotated[
        list[str] | None,
        Field(
            description="The hosts an approved command's box reaches (approve only, a command run in a box): each\na host name (`registry.npmjs.org`; HTTPS, HTTP or git's port) or `host:port`, at most 16.\nNone: the hosts its preview names (`reaches`); `[]`: no network."
        ),
    ] = None


class DecisionRequest3(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    outcome: Annotated[Outcome3, Field(description="The outcome.")]
    reason: Annotated[str | None, Field(description="Why.", max_length=10000)] = None
    feedback: Annotated[
        str,
        Field(
            description="What the agent should change (not blank).",
            max_length=10000,
            pattern="\\S",
        ),
    ]
    seen: Annotated[
        str | None,
        Field(
            description="What the person was shown: the SHA-256 (hex) of the canonical payload of the proposal on\ntheir screen. A decision that names another proposal than the one shown is refused (409\n`not_what_was_shown`) and changes nothing. The app and the phone send it.",
            pattern="^[0-9a-f]{64}$",
        ),
    ] = None
    run: RunIn | None = None
    hosts: Annotated[
        list[str] | None,
        Field(
            description="The hosts an approved command's box reaches (approve only, a command run in a box): each\na host name (`registry.npmjs.org`; HTTPS, HTTP or git's port) or `host:port`, at most 16.\nNone: the hosts its preview names (`reaches`); `[]`: no network."
        ),
    ] = None


class DecisionRequest(
    RootModel[DecisionRequest1 | DecisionRequest2 | DecisionRequest3]
):
    root: Annotated[
        DecisionRequest1 | DecisionRequest2 | DecisionRequest3,
        Field(description="What a person sends to decide."),
    ]


class DeviceInfo(BaseModel):
    name: Annotated[str, Field(description="The name the person gave it.")]
    added_at: Annotated[Timestamp, Field(description="When it was paired.")]
    last_used_at: Timestamp | None = None
    revoked_at: Timestamp | None = None


class DeviceList(BaseModel):
    items: Annotated[
        list[DeviceInfo], Field(description="By name, revoked ones included.")
    ]


class GroupDecision(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    group_id: Annotated[str, Field(description="The group.", min_length=1)]
    agent: Annotated[
        str | None,
        Field(
            description="The agent whose group it is (needed when more than one agent used this `group_id`)."
        ),
    ] = None
    node: Annotated[
        str | None,
        Field(
            description="The node that received the group, on a team store (needed when agents of the same name\non several nodes used this `group_id`)."
        ),
    ] = None
    outcome: Annotated[
        Outcome, Field(description="The decision (no edits: edits are per proposal).")
    ]
    reason: Annotated[str | None, Field(description="Why.")] = None
    feedback: Annotated[str | None, Field(description="What to change (refine).")] = (
        None
    )


class Hunk(BaseModel):
    old_start: Annotated[
        int, Field(description="First line in the current file (1-based).", ge=0)
    ]
    old_lines: Annotated[
        int, Field(description="Lines of the current file it covers.", ge=0)
    ]
    new_start: Annotated[
        int, Field(description="First line in the new content (1-based).", ge=0)
    ]
    new_lines: Annotated[
        int, Field(description="Lines of the new content it covers.", ge=0)
    ]
    lines: Annotated[list[Line], Field(description="Its lines, in unified order.")]


class LogEntry(BaseModel):
    seq: Annotated[int, Field(description="Position in the log.")]
    device: Annotated[
        str | None, Field(description="The device, when one is known.")
    ] = None
    event: Annotated[
        str,
        Field(
            description="What happened: `enabled`, `disabled`, `paired`, `revoked`, `pairing_refused`,\n`login_refused`, `decision_refused`, `locked_out` (a door closed: its `door`),\n`front_refused` (refused before any route: its `code`), `push_on`, `push_off`."
        ),
    ]
    at: Annotated[Timestamp, Field(description="When.")]
    detail: Annotated[
        Any | None,
        Field(
            description="More about it (a refusal's `code`, a closed door's `door`)."
        ),
    ] = None


class NewProposal1(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind, Field(description="The kind of write.")]
    payload: Annotated[ToolCall, Field(description="The tool.call payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None


class NewProposal(RootModel[NewProposal1 | NewProposal2 | NewProposal3 | NewProposal4]):
    root: Annotated[
        NewProposal1 | NewProposal2 | NewProposal3 | NewProposal4,
        Field(description="What an agent sends to propose."),
    ]


class Preview1(ToolPreview):
    type: Type3


class ProposalSummary(BaseModel):
    id: Annotated[str, Field(description="Id.")]
    kind: Annotated[str, Field(description="Kind.")]
    agent: Annotated[str, Field(description="Agent.")]
    node: Annotated[
        str | None, Field(description="The node that received it (team store).")
    ] = None
    title: Annotated[str | None, Field(description="The agent's title.")] = None
    status: Annotated[Status, Field(description="Status.")]
    settled: Annotated[bool, Field(description="Settled for its kind.")]
    session_id: Annotated[str | None, Field(description="Session.")] = None
    group_id: Annotated[str | None, Field(description="Group.")] = None
    supersedes: Annotated[str | None, Field(description="Revises.")] = None
    created_at: Annotated[Timestamp, Field(description="Created.")]
    updated_at: Annotated[Timestamp, Field(description="Last change.")]
    expires_at: Annotated[Timestamp, Field(description="Expiry.")]


class RemoteLogPage(BaseModel):
    items: Annotated[list[LogEntry], Field(description="In order.")]
    next_after: Annotated[
        int | None,
        Field(description="When the page is full: the `after` to ask for next."),
    ] = None


class RemotePairing(BaseModel):
    link: Annotated[
        str,
        Field(
            description="The link to open on the phone (it carries the code after `#`, which no server or proxy\non the way sees)."
        ),
    ]
    expires_at: Annotated[Timestamp, Field(description="When the code stops working.")]


class Retired(BaseModel):
    kid: Annotated[str, Field(description="The key's id.")]
    node: Annotated[
        str | None, Field(description="The node whose key it was, on a team store.")
    ] = None
    published_until: Annotated[
        Timestamp,
        Field(
            description="Until when it is published (the last receipt it signed expires then)."
        ),
    ]


class Rotated(BaseModel):
    kid: Annotated[str, Field(description="The id of the key that signs from now on.")]
    keys: Annotated[
        list[Any], Field(description="The keys published now, the new one among them.")
    ]
    retired: Annotated[
        list[Retired], Field(description="The retired keys still published.")
    ]


class RuleMatch(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    agent: Annotated[str | None, Field(description="The agent's name.")] = None
    kind: Annotated[str | None, Field(description="The kind.")] = None
    tool: Annotated[
        str | None, Field(description="The tool's name, a glob (`tool.call`).")
    ] = None
    input: Annotated[
        str | None,
        Field(
            description="The leading words of the tool's command (`tool.call` with a `command` input), or with\n`exact`, the whole command."
        ),
    ] = None
    exact: Annotated[
        bool | None,
        Field(
            description='`input` is the whole command line, exactly (what "allow similar" saves for a command\nthat writes, deletes, pushes or runs code).'
        ),
    ] = None
    builtin: Annotated[
        str | None,
        Field(
            description="A built-in rule (`read_only`: commands that only read inside the working folder)."
        ),
    ] = None
    path: Annotated[
        str | None,
        Field(
            description="The file's path, a glob (file kinds, and a tool's `file_path`, `path` or\n`notebook_path` input)."
        ),
    ] = None
    method: Annotated[str | None, Field(description="The HTTP method.")] = None
    host: Annotated[
        str | None,
        Field(
            description="The HTTP host (`api.github.com`), or an origin (`https://api.github.com:443`): an\n`http.request`'s, or a tool's `url` input."
        ),
    ] = None
    credential: Annotated[str | None, Field(description="The credential's name.")] = (
        None
    )
    confine: Confine | None = None
    reaches: Annotated[
        list[str] | None,
        Field(
            description='Not a field it matches: the hosts the box of a command it allows reaches (`github.com`\nfor a push), through Assent\'s proxy; a command that would reach others is not allowed by\nit. With `confine` only. "Allow similar" sets it from the decision.'
        ),
    ] = None
    script: ScriptPin | None = None


class RuleTest1(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Annotated[Kind4, Field(description="The kind of write.")]
    payload: Annotated[ToolCall, Field(description="The tool.call payload.")]
    title: Annotated[
        str | None,
        Field(
            description="A short title in the agent's words.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="A longer summary in the agent's words.",
            max_length=10000,
            pattern="^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    session_id: Annotated[
        str | None,
        Field(
            description="The agent's session.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    group_id: Annotated[
        str | None,
        Field(
            description="The batch it belongs to.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    supersedes: Annotated[
        str | None,
        Field(
            description="The refined (or pending) proposal this one revises.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it expires undecided: 1 to the server's `max_expires_in` (30 days,\n2,592,000, unless configured otherwise); left out, the server's default.",
            ge=1,
            le=2592000,
        ),
    ] = None
    lease_secs: Annotated[
        int | None,
        Field(
            description="Seconds the proposal may go without its agent waiting for the answer (an open wait) or\nreading it, 5 to 3,600: once they pass, Assent withdraws it, so a question nobody waits\nfor leaves the inbox (the agent was killed, or gave up). Left out: it waits until it\nexpires.",
            ge=5,
            le=3600,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who will check the decision's receipt (a tool server's or an API's name, as it expects\nit): the receipt's `aud`, so a receipt made for one server is refused by another.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        ),
    ] = None
    agent: Annotated[
        str | None,
        Field(description="The agent that would send it (`default` when left out)."),
    ] = None


class RuleTest(RootModel[RuleTest1 | RuleTest2 | RuleTest3 | RuleTest4]):
    root: Annotated[
        RuleTest1 | RuleTest2 | RuleTest3 | RuleTest4,
        Field(description="A proposal body, and the agent that would send it."),
    ]


class Similar(BaseModel):
    match: Annotated[RuleMatch, Field(description="Its match.")]
    description: Annotated[str, Field(description="It in plain words.")]


class Batch1(BaseModel):
    items: Annotated[
        list[BatchItem],
        Field(description="The decisions.", max_length=1000, min_length=1),
    ]


class Batch(RootModel[Batch1 | GroupDecision]):
    root: Annotated[
        Batch1 | GroupDecision,
        Field(
            description="Body of `POST /v1/decisions`: a list of items, or a whole group."
        ),
    ]


class CredentialList(BaseModel):
    items: Annotated[list[CredentialMeta], Field(description="By name.")]


class Diff(BaseModel):
    too_large: Annotated[
        bool | None, Field(description="Too large to diff: no hunks.")
    ] = None
    hunks: Annotated[
        list[Hunk] | None,
        Field(description="The hunks; left out of the reduced views."),
    ] = None
    stats: Stats | None = None
    truncated: Annotated[
        bool | None, Field(description="More lines changed than a preview shows.")
    ] = None
    summary: Annotated[
        str | None,
        Field(
            description="What replaced the diff when there is none to show (a binary file)."
        ),
    ] = None


class Event1(BaseModel):
    proposal: Annotated[ProposalSummary, Field(description="The proposal.")]
    type: Type


class Event2(BaseModel):
    proposal: Annotated[
        ProposalSummary, Field(description="The proposal as it now is.")
    ]
    from_: Annotated[Status, Field(alias="from", description="Its previous status.")]
    type: Type1


class Event(RootModel[Event1 | Event2 | Event3]):
    root: Annotated[
        Event1 | Event2 | Event3, Field(description="A change to a proposal.")
    ]


class FilePreview(Diff):
    path: Annotated[str, Field(description="The real, absolute path.")]
    exists: Annotated[
        bool, Field(description="Whether the file existed when proposed.")
    ]
    current_size: Annotated[int | None, Field(description="Its size then.", ge=0)] = (
        None
    )
    current_sha256: Annotated[str | None, Field(description="Its SHA-256 then.")] = None
    new_size: Annotated[
        int | None, Field(description="The new content's size (writes).", ge=0)
    ] = None
    new_sha256: Annotated[
        str | None, Field(description="The new content's SHA-256 (writes).")
    ] = None
    binary_current: Annotated[
        bool | None,
        Field(description="Whether the current content is binary (not diffed)."),
    ] = None
    invisible_characters: Annotated[
        list[Found] | None,
        Field(description="Hidden characters in the path and the new content."),
    ] = None
    content_withheld: Annotated[
        bool | None,
        Field(
            description="Set in an agent's view: the diff (what Assent read) is left out."
        ),
    ] = None
    content_pruned: Annotated[
        bool | None,
        Field(description="Set when the content was pruned after the retention."),
    ] = None


class NewRule(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    effect: Annotated[Effect, Field(description="What it does.")]
    match: Annotated[RuleMatch | None, Field(description="What it matches.")] = None
    everything: Annotated[
        bool | None,
        Field(description="Set to make an empty match mean every proposal."),
    ] = None
    expires_in: Annotated[
        int | None,
        Field(
            description="Seconds until it stops matching, 1 to 31,622,400 (none: until removed).",
            ge=1,
            le=31622400,
        ),
    ] = None
    note: Annotated[
        str | None, Field(description="A note (a denied proposal's reason).")
    ] = None


class Preview2(FilePreview):
    type: Type4


class Preview3(FilePreview):
    type: Type5


class Preview(RootModel[Preview1 | Preview2 | Preview3 | Preview4 | Preview5]):
    root: Annotated[
        Preview1 | Preview2 | Preview3 | Preview4 | Preview5,
        Field(
            description="A preview: one variant per kind, tagged by `type`. Reading one never fails (see\n[`Preview::read`])."
        ),
    ]


class Proposal(BaseModel):
    id: Annotated[str, Field(description="Opaque, unguessable id.")]
    kind: Annotated[str, Field(description="The kind (`tool.call`, ...).")]
    agent: Annotated[
        str,
        Field(
            description="The agent that proposed it: always from its token, never from the body."
        ),
    ]
    node: Annotated[
        str | None,
        Field(
            description="The node (Assent server) that received it, on a team store: the only one that applies it."
        ),
    ] = None
    title: Annotated[
        str | None, Field(description="The agent's own title: its words, not Assent's.")
    ] = None
    summary: Annotated[
        str | None,
        Field(description="The agent's own summary: its words, not Assent's."),
    ] = None
    payload: Annotated[
        Any,
        Field(
            description="The validated, normalized payload: stored once, never changed."
        ),
    ]
    preview: Annotated[
        Preview, Field(description="Computed by Assent from the stored payload.")
    ]
    base: Annotated[
        Any | None,
        Field(
            description="What the target looked like when proposed (for kinds that have a target)."
        ),
    ] = None
    session_id: Annotated[
        str | None, Field(description="The agent's session (a conversation or task).")
    ] = None
    group_id: Annotated[
        str | None, Field(description="A batch of proposals decided together.")
    ] = None
    supersedes: Annotated[
        str | None, Field(description="The proposal this one revises.")
    ] = None
    status: Annotated[Status, Field(description="Where it is in its life.")]
    settled: Annotated[
        bool,
        Field(
            description="Whether this is final for the proposal's kind (the agent stops waiting)."
        ),
    ]
    created_at: Annotated[Timestamp, Field(description="When it was proposed.")]
    updated_at: Annotated[Timestamp, Field(description="When it last changed.")]
    expires_at: Annotated[
        Timestamp, Field(description="When it expires if nobody decides.")
    ]
    lease_secs: Annotated[
        int | None,
        Field(
            description="Its lease, in seconds: while pending, it is withdrawn once its agent has neither waited\nfor the answer nor read it for this long (none: it waits until it expires).",
            ge=0,
        ),
    ] = None
    audience: Annotated[
        str | None,
        Field(
            description="Who the decision's receipt is for (the tool server or API that will check it): its `aud`."
        ),
    ] = None
    decision: Decision | None = None
    approved_payload: Annotated[
        Any | None,
        Field(
            description="The payload that was approved (the edited one when the person edited it): what runs."
        ),
    ] = None
    result: Annotated[Any | None, Field(description="What applying it produced.")] = (
        None
    )
    error: ErrorInfo | None = None
    pruned_at: Timestamp | None = None


class ProposedItem(BaseModel):
    index: Annotated[int, Field(description="Its place in the request, from 0.", ge=0)]
    proposal: Proposal | None = None
    error: ErrorInfo | None = None


class Rule(BaseModel):
    id: Annotated[str, Field(description="Its id (`r_...`).")]
    effect: Annotated[Effect, Field(description="What it does.")]
    match: Annotated[RuleMatch, Field(description="What it matches.")]
    everything: Annotated[
        bool | None,
        Field(description="Set when it deliberately matches every proposal."),
    ] = None
    note: Annotated[
        str | None, Field(description="The person's note (a denied proposal's reason).")
    ] = None
    description: Annotated[str, Field(description="The rule in plain words.")]
    created_by: Annotated[
        str,
        Field(
            description="Who made it (`owner`, or the person's name on a team store)."
        ),
    ]
    node: Annotated[
        str | None,
        Field(description="The node (Assent server) it was made on, on a team store."),
    ] = None
    created_channel: Annotated[Channel, Field(description="Through which channel.")]
    created_at: Annotated[Timestamp, Field(description="When.")]
    expires_at: Timestamp | None = None
    matched: Annotated[
        int,
        Field(
            description="How many proposals it decided or sent to the inbox (the winning rule only).",
            ge=0,
        ),
    ]


class RuleLogEntry(BaseModel):
    seq: Annotated[int, Field(description="Position in the log.")]
    rule_id: Annotated[str, Field(description="The rule.")]
    event: Annotated[str, Field(description="`added` or `removed`.")]
    actor: Annotated[str, Field(description="Who.")]
    channel: Annotated[Channel, Field(description="Through which channel.")]
    at: Annotated[Timestamp, Field(description="When.")]
    rule: Annotated[Rule, Field(description="The rule as it was.")]


class RuleLogPage(BaseModel):
    items: Annotated[list[RuleLogEntry], Field(description="In order.")]
    next_after: Annotated[
        int | None,
        Field(description="When the page is full: the `after` to ask for next."),
    ] = None


class RuleView(Rule):
    would_have_matched: Annotated[
        int,
        Field(
            description="How many of the latest proposals (up to 10,000) it matches, whatever decided them.",
            ge=0,
        ),
    ]
    saved_this_week: Annotated[
        int,
        Field(
            description="How many proposals of the last seven days it decided without asking anyone.",
            ge=0,
        ),
    ]


class Verdict(BaseModel):
    effect: Annotated[Effect, Field(description="`allow`, `deny` or `ask`.")]
    rule: Rule | None = None


class Decided(Proposal):
    rule: Rule | None = None


class Page(BaseModel):
    items: Annotated[list[Proposal], Field(description="The proposals, newest first.")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; absent on the last page."
        ),
    ] = None


class ProposedBatch(BaseModel):
    group_id: Annotated[
        str,
        Field(
            description="The group every filed item is in (decided together in the inbox)."
        ),
    ]
    items: Annotated[
        list[ProposedItem], Field(description="Per item, in request order.")
    ]
    filed: Annotated[int, Field(description="How many were filed.", ge=0)]
    refused: Annotated[int, Field(description="How many were refused.", ge=0)]


class RuleList(BaseModel):
    items: Annotated[list[RuleView], Field(description="Oldest first.")]
    recent: Annotated[
        int,
        Field(
            description="How many recent proposals `would_have_matched` looked at.",
            ge=0,
        ),
    ]
    total: Annotated[
        int, Field(description="How many rules are in force, on every page.", ge=0)
    ]
    next_after: Annotated[
        int | None,
        Field(description="The `after` to ask for the next page; none on the last."),
    ] = None
