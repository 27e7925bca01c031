"""Assent's Python SDK: propose writes to Assent's approval inbox, wait for the person's
decision, and gate any function behind one (`@gated`)."""

from .client import Assent, AsyncAssent
from .errors import (
    AssentError,
    AssentNotRunning,
    Expired,
    Failed,
    Impostor,
    NoProofKey,
    NotApproved,
    ReceiptInvalid,
    Refined,
    Refused,
    Rejected,
    Unauthorized,
    Withdrawn,
)
from .gated import gated, outcome
from .receipts import verify_receipt

__all__ = [
    "Assent", "AsyncAssent", "AssentError", "AssentNotRunning", "Expired", "Failed", "Impostor", "NoProofKey",
    "NotApproved", "ReceiptInvalid", "Refined", "Refused", "Rejected", "Unauthorized", "Withdrawn", "gated",
    "outcome", "verify_receipt",
]
__version__ = "0.1.0"
