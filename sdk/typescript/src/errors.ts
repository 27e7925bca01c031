/** Every failure talking to Assent, and every way a decision ends other than approved. None is
 * ever taken for an approval. */

/** Any failure talking to Assent. Thrown as itself for an answer this SDK cannot read (not JSON,
 * or not the shape the API documents: a server of another version), with the reason as its
 * `cause`. */
export class AssentError extends Error {
  override name = "AssentError";
}

/** No Assent answered: nothing listens where it should (nothing was sent), or it stopped
 * answering mid-request (the server died during a wait). Start the app or `assent serve`. The
 * fetch error is its `cause`. */
export class AssentNotRunning extends AssentError {
  override name = "AssentNotRunning";
}

/** A server's address is known (`ASSENT_URL`, or `url`) but not the key it proves itself with:
 * that is in its home's `server.json`, which was not found, is for another address, or holds no
 * key. Nothing was sent to it. Point `ASSENT_HOME` (or `home`) at that server's home, or set
 * `ASSENT_PROOF_KEY` to the `proof_key` in its `server.json`. */
export class NoProofKey extends AssentError {
  override name = "NoProofKey";
}

/** Something listens where Assent should be but could not prove it is this home's Assent: no
 * token was sent to it. */
export class Impostor extends AssentError {
  override name = "Impostor";
}

/** Assent refused the request: a stable `code`, a message for people, the HTTP status. */
export class Refused extends AssentError {
  override name = "Refused";
  constructor(readonly code: string, message: string, readonly status: number) {
    super(`${code}: ${message}`);
  }
}

/** The agent token was not accepted (401) or is not allowed this (403). */
export class Unauthorized extends Refused {
  override name = "Unauthorized";
}

/** The person (or a rule) did not approve: the call did not run. */
export class NotApproved extends Error {
  override name = "NotApproved";
  constructor(readonly proposalId: string, message: string) {
    super(message);
  }
}

export class Rejected extends NotApproved {
  override name = "Rejected";
  constructor(proposalId: string, readonly reason: string | null) {
    super(proposalId, reason ? `rejected in Assent: ${reason}` : "rejected in Assent");
  }
}

export class Refined extends NotApproved {
  override name = "Refined";
  constructor(proposalId: string, readonly feedback: string | null) {
    super(proposalId, `the person asks for changes: ${feedback ?? "(no feedback)"}`);
  }
}

/** Nobody decided in time: it expired in Assent (its `expires_in` passed). */
export class Expired extends NotApproved {
  override name = "Expired";
}

/** It was withdrawn before anyone decided: by the agent (a wait that ran out with
 * `withdrawOnTimeout`, so a `gated` call past its `timeout`, or an aborted wait), or by Assent
 * once nobody waited on it past its lease. */
export class Withdrawn extends NotApproved {
  override name = "Withdrawn";
}

/** Approved, but it could not be carried out as approved: Assent's applying it failed, or the
 * approved input is not arguments a gated function takes (`arguments_unfit`), which then did
 * not run. */
export class Failed extends NotApproved {
  override name = "Failed";
  constructor(proposalId: string, readonly code: string, message: string) {
    super(proposalId, `approved, but applying it failed (${code}): ${message}`);
  }
}

/** A receipt did not verify, or could not be checked; `code` says why (`malformed`,
 * `bad_signature`, `algorithm`, `expired`, `not_yet_valid`, `not_approved`, `wrong_outcome`,
 * `wrong_audience`, `payload_mismatch`, `wrong_tool`, `unsafe_integer`). */
export class ReceiptInvalid extends AssentError {
  override name = "ReceiptInvalid";
  constructor(readonly code: string, message: string) {
    super(`${code}: ${message}`);
  }
}
