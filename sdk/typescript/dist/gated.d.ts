/** `gated`: a function that runs only once a person approves the call in Assent, with the
 * arguments they approved. */
import { Assent, type Proposal } from "./client.js";
/** The approved input of a settled `tool.call` proposal; otherwise throws the NotApproved that
 * says why it must not run. */
export declare function outcome(p: Proposal): Record<string, unknown>;
export interface GateOptions<A> {
    /** The tool's name as the person sees it (default: the function's name). */
    tool?: string;
    /** A line for the person, shown as the agent's words. */
    preview?: (args: A) => string;
    client?: Assent;
    /** Seconds to wait before withdrawing and throwing Expired (default an hour). */
    timeout?: number;
    /** Who the decision's receipt is for. */
    audience?: string;
    /** Check the decision's signed receipt against the arguments before running. */
    receipt?: boolean;
    /** `false` runs the function directly, said explicitly per tool. */
    requiresApproval?: boolean;
    /** `file.write`, `file.delete` or `http.request`: the function builds the payload, and Assent
     * carries it out once approved (an HTTP call with its credential from the keychain); the call
     * returns Assent's result of it. Default `tool.call`: the function itself runs. */
    kind?: string;
    sessionId?: string;
}
/** Wraps `fn(args)` (one object of named arguments, as agent tools take them) so that calling
 * it files a `tool.call` proposal and waits: approved, `fn` runs with exactly the approved
 * arguments, the person's edited input whole when they edited it, never merged with the
 * proposed ones (an argument they deleted stays deleted); otherwise it throws Rejected,
 * Refined, Expired or Withdrawn and `fn` does not run. */
export declare function gated<A extends Record<string, unknown>, R>(fn: (args: A) => R | Promise<R>, o?: GateOptions<A>): (args: A) => Promise<R>;
