/** Every failure talking to Assent, and every way a decision ends other than approved. None is
 * ever taken for an approval. */
export class AssentError extends Error {
    name = "AssentError";
}
/** No Assent answered: nothing listens where it should (nothing was sent), or it stopped
 * answering mid-request (the server died during a wait). Start the app or `assent serve`. */
export class AssentNotRunning extends AssentError {
    name = "AssentNotRunning";
}
/** Something listens where Assent should be but could not prove it is this home's Assent: no
 * token was sent to it. */
export class Impostor extends AssentError {
    name = "Impostor";
}
/** Assent refused the request: a stable `code`, a message for people, the HTTP status. */
export class Refused extends AssentError {
    code;
    status;
    name = "Refused";
    constructor(code, message, status) {
        super(`${code}: ${message}`);
        this.code = code;
        this.status = status;
    }
}
/** The agent token was not accepted (401) or is not allowed this (403). */
export class Unauthorized extends Refused {
    name = "Unauthorized";
}
/** The person (or a rule) did not approve: the call did not run. */
export class NotApproved extends Error {
    proposalId;
    name = "NotApproved";
    constructor(proposalId, message) {
        super(message);
        this.proposalId = proposalId;
    }
}
export class Rejected extends NotApproved {
    reason;
    name = "Rejected";
    constructor(proposalId, reason) {
        super(proposalId, reason ? `rejected in Assent: ${reason}` : "rejected in Assent");
        this.reason = reason;
    }
}
export class Refined extends NotApproved {
    feedback;
    name = "Refined";
    constructor(proposalId, feedback) {
        super(proposalId, `the person asks for changes: ${feedback ?? "(no feedback)"}`);
        this.feedback = feedback;
    }
}
export class Expired extends NotApproved {
    name = "Expired";
}
export class Withdrawn extends NotApproved {
    name = "Withdrawn";
}
/** Approved, but it could not be carried out as approved: Assent's applying it failed, or the
 * approved input is not arguments a gated function takes (`arguments_unfit`), which then did
 * not run. */
export class Failed extends NotApproved {
    code;
    name = "Failed";
    constructor(proposalId, code, message) {
        super(proposalId, `approved, but applying it failed (${code}): ${message}`);
        this.code = code;
    }
}
/** A receipt did not verify, or could not be checked; `code` says why (`malformed`,
 * `bad_signature`, `algorithm`, `expired`, `not_yet_valid`, `not_approved`, `wrong_outcome`,
 * `wrong_audience`, `payload_mismatch`, `wrong_tool`, `unsafe_integer`). */
export class ReceiptInvalid extends AssentError {
    code;
    name = "ReceiptInvalid";
    constructor(code, message) {
        super(`${code}: ${message}`);
        this.code = code;
    }
}
