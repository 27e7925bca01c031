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
import { NotApproved, Refused } from "../errors.js";
import { outcome } from "../gated.js";
import { sameJson } from "../receipts.js";
import { type ArgsSchema, callKey, filled, leftOut, newRunKey, unfit, waitAll } from "./common.js";

export interface RunWithAssentOptions {
  client?: Assent;
  /** Seconds to wait for the person on each call (default an hour). */
  timeout?: number;
  sessionId?: string;
  audience?: string;
  /** Passed on to the SDK's `run`. */
  runOptions?: Record<string, unknown>;
}

interface ApprovalItem {
  rawItem: { name?: string; arguments?: string; callId?: string };
}

function argumentsOf(item: ApprovalItem): Record<string, unknown> {
  try {
    const v = JSON.parse(item.rawItem.arguments ?? "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : { arguments: v };
  } catch {
    return { arguments: item.rawItem.arguments };
  }
}

/** What `run` of the OpenAI Agents SDK returns, as far as this adapter reads it; name the SDK's
 * own `RunResult` as `R` to get it whole. */
export interface RunResultLike {
  finalOutput?: unknown;
  interruptions?: unknown[];
  state: unknown;
}

/** Runs `agent` to its answer with the SDK's `run`, settling every round of tool approvals
 * through Assent: the run's last result. */
export async function runWithAssent<R extends RunResultLike = RunResultLike>(
  agent: unknown,
  input: unknown,
  o: RunWithAssentOptions = {},
): Promise<R> {
  const { run } = await import("@openai/agents");
  const client = o.client ?? new Assent();
  // Each function tool's JSON schema, by name: where its arguments' defaults are.
  const tools = ((agent as { tools?: { name?: string; parameters?: unknown }[] }).tools ?? []);
  const schemas = new Map(tools.filter((t) => t.name).map((t) => [t.name as string, t.parameters as ArgsSchema]));
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let result: any = await run(agent as never, input as never, o.runOptions as never);
  while (result.interruptions?.length) {
    const state = result.state;
    // Each round its own key: a model that numbers its calls afresh (`call_0` again) never gets
    // an earlier decision.
    const runKey = newRunKey();
    const filed = [];
    for (const item of result.interruptions as ApprovalItem[]) {
      // The call as the tool will run it: the defaults of what the model left out (a tool that
      // is not strict) filled in and shown, so none runs unseen.
      const args = filled(argumentsOf(item), schemas.get(item.rawItem.name ?? ""));
      try {
        const p = await client.proposeTool(item.rawItem.name ?? "tool", args, {
          session_id: o.sessionId,
          audience: o.audience,
          lease_secs: 15,
          idempotencyKey: callKey("openai-agents", runKey, item.rawItem.callId),
        });
        filed.push({ item, args, p });
      } catch (e) {
        // An argument Assent does not take: a denial the model reads, the turn's other calls
        // going on to the person (it used to end the run, leaving those waiting in vain).
        if (!(e instanceof Refused)) throw e;
        state.reject(item, { message: `Assent refused this call (${e.code}): ${e.message}. It did not run` });
      }
    }
    // All at once: an open wait keeps a proposal's lease, so none is withdrawn while the person
    // decides another.
    const done = await waitAll(client, filed.map((f) => f.p.id), o.timeout ?? 3600);
    filed.forEach(({ item, args }, n) => {
      try {
        const approved = outcome(done[n]);
        const missing = leftOut(approved, schemas.get(item.rawItem.name ?? ""));
        if (missing.length) state.reject(item, { message: unfit(missing) });
        else if (sameJson(approved, args)) state.approve(item);
        else
          state.reject(item, {
            message: `The person approved this only as edited in Assent: call the tool again with these arguments: ${JSON.stringify(approved)}`,
          });
      } catch (e) {
        if (e instanceof NotApproved) state.reject(item, { message: e.message });
        else throw e;
      }
    });
    result = await run(agent as never, state, o.runOptions as never);
  }
  return result as R;
}
