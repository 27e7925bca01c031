/** Every failure talking to Assent, and every way a decision ends other than approved. None is
 * ever taken for an approval. */
export declare class AssentError extends Error {
    name: string;
}
/** No Assent answered: nothing listens where it should (nothing was sent), or it stopped
 * answering mid-request (the server died during a wait). Start the app or `assent serve`. */
export declare class AssentNotRunning extends AssentError {
    name: string;
}
/** Something listens where Assent should be but could not prove it is this home's Assent: no
 * token was sent to it. */
export declare class Impostor extends AssentError {
    name: string;
}
/** Assent refused the request: a stable `code`, a message for people, the HTTP status. */
export declare class Refused extends AssentError {
    readonly code: string;
    readonly status: number;
    name: string;
    constructor(code: string, message: string, status: number);
}
/** The agent token was not accepted (401) or is not allowed this (403). */
export declare class Unauthorized extends Refused {
    name: string;
}
/** The person (or a rule) did not approve: the call did not run. */
export declare class NotApproved extends Error {
    readonly proposalId: string;
    name: string;
    constructor(proposalId: string, message: string);
}
export declare class Rejected extends NotApproved {
    readonly reason: string | null;
    name: string;
    constructor(proposalId: string, reason: string | null);
}
export declare class Refined extends NotApproved {
    readonly feedback: string | null;
    name: string;
    constructor(proposalId: string, feedback: string | null);
}
export declare class Expired extends NotApproved {
    name: string;
}
export declare class Withdrawn extends NotApproved {
    name: string;
}
/** Approved, but it could not be carried out as approved: Assent's applying it failed, or the
 * approved input is not arguments a gated function takes (`arguments_unfit`), which then did
 * not run. */
export declare class Failed extends NotApproved {
    readonly code: string;
    name: string;
    constructor(proposalId: string, code: string, message: string);
}
/** A receipt did not verify, or could not be checked; `code` says why (`malformed`,
 * `bad_signature`, `algorithm`, `expired`, `not_yet_valid`, `not_approved`, `wrong_outcome`,
 * `wrong_audience`, `payload_mismatch`, `wrong_tool`, `unsafe_integer`). */
export declare class ReceiptInvalid extends AssentError {
    readonly code: string;
    name: string;
    constructor(code: string, message: string);
}
