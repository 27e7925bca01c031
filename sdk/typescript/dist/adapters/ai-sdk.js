/** The Vercel AI SDK: Assent decides its tool approvals, on the server.
 *
 * `generateText` / `streamText` (and `ToolLoopAgent`) take a `toolApproval` function deciding
 * each tool call before it runs. `assentToolApproval()` is one: it files the call as a
 * `tool.call` proposal, waits for the person, and answers `approved`, or `denied` with their
 * words (the model reads them in the tool's `execution-denied` result). The AI SDK runs a call
 * only as the model made it, so an approval with edits is answered as a denial naming the
 * edited input to call again with (that call comes back to Assent). No decision in time:
 * denied, the proposal withdrawn. Assent unreachable: denied. A model that reuses tool-call ids
 * (`call_0` in every run, as local model servers do) is asked again each run: the keys are
 * scoped to the `assentToolApproval()` made for the run.
 *
 *     import { generateText, stepCountIs } from "ai";
 *     import { assentToolApproval } from "assent/ai-sdk";
 *
 *     await generateText({ model, tools, toolApproval: assentToolApproval(), stopWhen: stepCountIs(5), prompt });
 */
import { Assent } from "../client.js";
import { AssentError, NotApproved } from "../errors.js";
import { outcome } from "../gated.js";
import { sameJson } from "../receipts.js";
import { CallKeys } from "./common.js";
/** A `toolApproval` function that asks the person in Assent. Make one for each run (each
 * `generateText` / `streamText` call): its proposals' idempotency keys are the tool-call id
 * under a random key of its own, so a model that reuses ids never gets another run's decision. */
export function assentToolApproval(o = {}) {
    const keys = new CallKeys("ai-sdk");
    return async ({ toolCall }) => {
        const client = o.client ?? new Assent();
        try {
            const p = await client.proposeTool(toolCall.toolName, toolCall.input, {
                session_id: o.sessionId,
                audience: o.audience,
                lease_secs: 15,
                idempotencyKey: keys.key(toolCall.toolCallId),
            });
            const done = await client.wait(p.id, { timeout: o.timeout ?? 3600, withdrawOnTimeout: true });
            keys.done(toolCall.toolCallId);
            const approved = outcome(done);
            if (sameJson(approved, toolCall.input))
                return { type: "approved" };
            return {
                type: "denied",
                reason: `The person approved this only as edited in Assent: call the tool again with this input: ${JSON.stringify(approved)}`,
            };
        }
        catch (e) {
            if (e instanceof NotApproved)
                return { type: "denied", reason: e.message };
            if (e instanceof AssentError)
                return { type: "denied", reason: `Assent could not ask the person (${e.message}); denied for safety` };
            throw e;
        }
    };
}
