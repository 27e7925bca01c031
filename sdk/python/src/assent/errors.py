"""What can go wrong talking to Assent, and how a decision can end other than approved.

Every failure is one of these, never a bare HTTP error, and none of them is ever taken for an
approval.
"""

from __future__ import annotations


class AssentError(Exception):
    """Any failure talking to Assent. Raised as itself for an answer this SDK cannot read (not
    JSON, or not the shape the API documents: a server of another version), with the reason as
    its cause."""


class AssentNotRunning(AssentError):
    """No Assent answered: nothing listens where it should (nothing was sent), or it stopped
    answering mid-request (the server died during a wait, the connection dropped). Start the
    app or `assent serve`. A proposal sent just before may have been filed: filing it again
    with the same idempotency key files nothing twice."""


class NoProofKey(AssentError):
    """A server's address is known (`ASSENT_URL`, or `url=`) but not the key it proves itself
    with: that is in its home's `server.json`, which was not found, is for another address, or
    holds no key. Nothing was sent to it. Point `ASSENT_HOME` (or `home=`) at that server's
    home, or set `ASSENT_PROOF_KEY` to the `proof_key` in its `server.json`."""


class Impostor(AssentError):
    """Something listens where Assent should be but could not prove it is Assent's server of
    this home (`GET /v1/hello`): no token was sent to it."""


class Unauthorized(AssentError):
    """The agent token was not accepted (401), or is not allowed this (403)."""

    def __init__(self, code: str, message: str, status: int):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.status = code, message, status


class Refused(AssentError):
    """Assent refused the request: a stable `code` (see the API's error codes), a message for
    people, and the HTTP status."""

    def __init__(self, code: str, message: str, status: int):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.status = code, message, status


class NotApproved(Exception):
    """The person (or a rule) did not approve: the call did not run."""

    def __init__(self, proposal_id: str, message: str):
        super().__init__(message)
        self.proposal_id = proposal_id


class Rejected(NotApproved):
    """Rejected, with the person's reason."""

    def __init__(self, proposal_id: str, reason: str | None):
        super().__init__(proposal_id, f"rejected in Assent: {reason}" if reason else "rejected in Assent")
        self.reason = reason


class Refined(NotApproved):
    """The person asks for changes: propose again with them (`supersedes` the id)."""

    def __init__(self, proposal_id: str, feedback: str | None):
        super().__init__(proposal_id, f"the person asks for changes: {feedback}")
        self.feedback = feedback


class Expired(NotApproved):
    """Nobody decided in time: it expired in Assent (its `expires_in` passed)."""


class Withdrawn(NotApproved):
    """It was withdrawn before anyone decided: by the agent (a wait that ran out with
    `withdraw_on_timeout`, so a `gated` call past its `timeout`), or by Assent once nobody
    waited on it past its lease."""


class Failed(NotApproved):
    """Approved, but it could not be carried out as approved (`code`, `message`): Assent's
    applying it failed, or the approved arguments do not fit a gated function
    (`arguments_unfit`), which then did not run."""

    def __init__(self, proposal_id: str, code: str, message: str):
        super().__init__(proposal_id, f"approved, but applying it failed ({code}): {message}")
        self.code = code


class ReceiptInvalid(AssentError):
    """A decision's receipt did not verify, or could not be checked: `code` says why
    (`malformed`, `bad_signature`, `algorithm`, `expired`, `not_yet_valid`, `not_approved`,
    `wrong_outcome`, `wrong_audience`, `payload_mismatch`, `wrong_tool`, `unsafe_integer`;
    `not_installed`: the `receipts` extra is missing, so nothing could be checked)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
