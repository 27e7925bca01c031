/** Checking a decision's receipt offline: Assent's Ed25519 signature (a compact JWS, checked by
 * `jose`) with its public keys, and that it is for what is about to run (hashes over RFC 8785
 * JSON, by `canonicalize`). */
/** Seconds of clock difference tolerated. */
export declare const SKEW = 60;
export interface Claims {
    iss: string;
    sub: string;
    jti: string;
    iat: number;
    exp: number;
    aud?: string;
    outcome: string;
    kind: string;
    tool?: string;
    input_sha256?: string;
    payload_sha256: string;
    proposed_sha256: string;
    decided_by: string;
    channel: string;
}
/** SHA-256 (hex) of the RFC 8785 form of `value`. */
export declare function sha256Jcs(value: unknown): string;
/** Whether two JSON values are the same value (compared in their RFC 8785 form: key order and
 * how a number is written do not matter). */
export declare function sameJson(a: unknown, b: unknown): boolean;
/** Whether a receipt's `tool` names `name`: the same, or `mcp__SERVER__name`. */
export declare function namesTool(claimed: string, name: string): boolean;
export interface Expect {
    tool?: string;
    input?: unknown;
    payload?: unknown;
    audience?: string;
    /** The outcome the receipt must record (default `"approve"`: only an approval will do). Name
     * another (`"reject"`, `"refine"`) to accept it instead, explicitly. */
    outcome?: string;
    /** Unix seconds (default now). */
    now?: number;
}
/** The receipt's claims, or ReceiptInvalid with a code saying why not, and never another error,
 * whatever token, keys, arguments or payload it is given. Only an approval verifies unless
 * `e.outcome` names the outcome expected instead (`not_approved`; another named outcome is
 * `wrong_outcome`). Arguments or a payload holding an integer beyond 2^53-1 cannot be checked
 * (`unsafe_integer`). */
export declare function verifyReceipt(token: string, keys: unknown, e?: Expect): Promise<Claims>;
