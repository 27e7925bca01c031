/** What the adapters share: idempotency keys scoped to one run, and waiting on every proposal
 * of a turn at once. */

import { createHash, randomBytes } from "node:crypto";
import type { Assent, Proposal } from "../client.js";

/** The longest Idempotency-Key the server takes. */
const KEY_MAX = 200;

/** A fresh random key for one run. Idempotency keys are kept per agent for good, and models
 * (local model servers above all) reuse tool-call ids such as `call_0` from run to run: a key
 * made of the id alone would hand a new run an earlier run's decision. */
export function newRunKey(): string {
  return randomBytes(8).toString("hex");
}

/** The Idempotency-Key of one tool call of a run: a retry of it within the run gets the same
 * proposal, another run never does. An id that could not go in a header as it is (too long, not
 * visible ASCII) goes in as its SHA-256, so two ids never share a key. */
export function callKey(framework: string, runKey: string, callId: string | undefined): string | undefined {
  if (!callId) return undefined;
  const key = `${framework}:${runKey}:${callId}`;
  if (key.length <= KEY_MAX && /^[!-~]+$/.test(key)) return key;
  return `${framework}:${runKey}:sha256:${createHash("sha256").update(callId).digest("hex")}`;
}

/** The idempotency keys of an adapter asked call by call (a framework's approval callback): a
 * random key of its own, and the tool-call id. A call asked again before it got an answer (a
 * retry) gets the same proposal; once answered, the same id is a new call (a model that numbers
 * its calls afresh each turn) and gets a new proposal. */
export class CallKeys {
  readonly #run = newRunKey();
  readonly #answered = new Map<string, number>();

  constructor(readonly framework: string) {}

  key(callId: string | undefined): string | undefined {
    if (!callId) return undefined;
    const n = this.#answered.get(callId) ?? 0;
    return callKey(this.framework, n ? `${this.#run}.${n}` : this.#run, callId);
  }

  /** `callId` got its answer: the next call with this id is another call. */
  done(callId: string | undefined): void {
    if (callId) this.#answered.set(callId, (this.#answered.get(callId) ?? 0) + 1);
  }
}

/** Waits on every proposal at once, each settled proposal in the order of `ids`. Each open wait
 * holds its proposal's lease: the server withdraws a leased proposal nobody waits on, so
 * waiting on one while the others of the turn sit unwatched would lose them after the lease.
 * Should one wait fail, the others are aborted, which withdraws their proposals, before the
 * error goes on. */
export async function waitAll(client: Assent, ids: string[], timeout: number): Promise<Proposal[]> {
  const stop = new AbortController();
  const waits = ids.map((id) =>
    client.wait(id, { timeout, withdrawOnTimeout: true, signal: stop.signal }).catch((e: unknown) => {
      stop.abort(e);
      throw e;
    }),
  );
  const settled = await Promise.allSettled(waits);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<Proposal>).value);
}

/** A tool's JSON schema, as far as its arguments' defaults go. */
export interface ArgsSchema {
  properties?: Record<string, { default?: unknown } | undefined>;
}

/** `args` with each argument the tool's schema gives a default and the model left out filled in
 * with it: the call as the tool will run it, which is what the person is shown. */
export function filled(args: Record<string, unknown>, schema: ArgsSchema | undefined): Record<string, unknown> {
  const out = { ...args };
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    if (!(name in out) && prop && typeof prop === "object" && "default" in prop) out[name] = prop.default;
  }
  return out;
}

/** The arguments with a default that an approved input leaves out: run with it, the tool would
 * take a default the person was not shown approved. */
export function leftOut(approved: Record<string, unknown>, schema: ArgsSchema | undefined): string[] {
  return Object.entries(schema?.properties ?? {})
    .filter(([name, prop]) => prop && typeof prop === "object" && "default" in prop && !(name in approved))
    .map(([name]) => name);
}

/** What the model reads of an approved input that leaves out arguments with defaults. */
export function unfit(names: string[]): string {
  return `The person approved this only without ${names.map((n) => `\`${n}\``).join(", ")}, which the tool would have filled in with its default: it did not run (call it again with every argument it needs)`;
}
