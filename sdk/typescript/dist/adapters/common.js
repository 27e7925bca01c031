/** What the adapters share: idempotency keys scoped to one run, and waiting on every proposal
 * of a turn at once. */
import { createHash, randomBytes } from "node:crypto";
/** The longest Idempotency-Key the server takes. */
const KEY_MAX = 200;
/** A fresh random key for one run. Idempotency keys are kept per agent for good, and models
 * (local model servers above all) reuse tool-call ids such as `call_0` from run to run: a key
 * made of the id alone would hand a new run an earlier run's decision. */
export function newRunKey() {
    return randomBytes(8).toString("hex");
}
/** The Idempotency-Key of one tool call of a run: a retry of it within the run gets the same
 * proposal, another run never does. An id that could not go in a header as it is (too long, not
 * visible ASCII) goes in as its SHA-256, so two ids never share a key. */
export function callKey(framework, runKey, callId) {
    if (!callId)
        return undefined;
    const key = `${framework}:${runKey}:${callId}`;
    if (key.length <= KEY_MAX && /^[!-~]+$/.test(key))
        return key;
    return `${framework}:${runKey}:sha256:${createHash("sha256").update(callId).digest("hex")}`;
}
/** The idempotency keys of an adapter asked call by call (a framework's approval callback): a
 * random key of its own, and the tool-call id. A call asked again before it got an answer (a
 * retry) gets the same proposal; once answered, the same id is a new call (a model that numbers
 * its calls afresh each turn) and gets a new proposal. */
export class CallKeys {
    framework;
    #run = newRunKey();
    #answered = new Map();
    constructor(framework) {
        this.framework = framework;
    }
    key(callId) {
        if (!callId)
            return undefined;
        const n = this.#answered.get(callId) ?? 0;
        return callKey(this.framework, n ? `${this.#run}.${n}` : this.#run, callId);
    }
    /** `callId` got its answer: the next call with this id is another call. */
    done(callId) {
        if (callId)
            this.#answered.set(callId, (this.#answered.get(callId) ?? 0) + 1);
    }
}
/** Waits on every proposal at once, each settled proposal in the order of `ids`. Each open wait
 * holds its proposal's lease: the server withdraws a leased proposal nobody waits on, so
 * waiting on one while the others of the turn sit unwatched would lose them after the lease.
 * Should one wait fail, the others are aborted, which withdraws their proposals, before the
 * error goes on. */
export async function waitAll(client, ids, timeout) {
    const stop = new AbortController();
    const waits = ids.map((id) => client.wait(id, { timeout, withdrawOnTimeout: true, signal: stop.signal }).catch((e) => {
        stop.abort(e);
        throw e;
    }));
    const settled = await Promise.allSettled(waits);
    const failed = settled.find((s) => s.status === "rejected");
    if (failed)
        throw failed.reason;
    return settled.map((s) => s.value);
}
