/** The OpenAI Agents SDK for JavaScript: Assent settles a run's tool approvals.
 *
 * Tools declared with `needsApproval: true` pause the run: its result lists `interruptions`.
 * `runWithAssent` files each as a `tool.call` proposal (all of a round at once), waits on them
 * all at once (an open wait keeps a proposal's lease, so none is withdrawn while the person
 * decides another), approves or rejects the run's state with the person's answers (`message`
 * carries their words to the model), and resumes until the agent answers. The SDK runs a call
 * only as the model made it, so an approval with edits is answered as a rejection naming the
 * edited arguments to call again with. No decision in time: rejected, the proposal withdrawn. A
 * proposal's idempotency key is its call id under a random key made for each round: a model that
 * reuses ids such as `call_0` (as local model servers do) files new proposals, never getting an
 * earlier decision.
 *
 *     import { Agent, tool } from "@openai/agents";
 *     import { runWithAssent } from "assent/openai-agents";
 *
 *     const result = await runWithAssent(agent, "tidy the blog");
 */
import { Assent } from "../client.js";
export interface RunWithAssentOptions {
    client?: Assent;
    /** Seconds to wait for the person on each call (default an hour). */
    timeout?: number;
    sessionId?: string;
    audience?: string;
    /** Passed on to the SDK's `run`. */
    runOptions?: Record<string, unknown>;
}
/** Runs `agent` to its answer with the SDK's `run`, settling every round of tool approvals
 * through Assent. */
export declare function runWithAssent(agent: unknown, input: unknown, o?: RunWithAssentOptions): Promise<any>;
