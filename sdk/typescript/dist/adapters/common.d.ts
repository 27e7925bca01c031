/** What the adapters share: idempotency keys scoped to one run, and waiting on every proposal
 * of a turn at once. */
import type { Assent, Proposal } from "../client.js";
/** A fresh random key for one run. Idempotency keys are kept per agent for good, and models
 * (local model servers above all) reuse tool-call ids such as `call_0` from run to run: a key
 * made of the id alone would hand a new run an earlier run's decision. */
export declare function newRunKey(): string;
/** The Idempotency-Key of one tool call of a run: a retry of it within the run gets the same
 * proposal, another run never does. An id that could not go in a header as it is (too long, not
 * visible ASCII) goes in as its SHA-256, so two ids never share a key. */
export declare function callKey(framework: string, runKey: string, callId: string | undefined): string | undefined;
/** The idempotency keys of an adapter asked call by call (a framework's approval callback): a
 * random key of its own, and the tool-call id. A call asked again before it got an answer (a
 * retry) gets the same proposal; once answered, the same id is a new call (a model that numbers
 * its calls afresh each turn) and gets a new proposal. */
export declare class CallKeys {
    #private;
    readonly framework: string;
    constructor(framework: string);
    key(callId: string | undefined): string | undefined;
    /** `callId` got its answer: the next call with this id is another call. */
    done(callId: string | undefined): void;
}
/** Waits on every proposal at once, each settled proposal in the order of `ids`. Each open wait
 * holds its proposal's lease: the server withdraws a leased proposal nobody waits on, so
 * waiting on one while the others of the turn sit unwatched would lose them after the lease.
 * Should one wait fail, the others are aborted, which withdraws their proposals, before the
 * error goes on. */
export declare function waitAll(client: Assent, ids: string[], timeout: number): Promise<Proposal[]>;
