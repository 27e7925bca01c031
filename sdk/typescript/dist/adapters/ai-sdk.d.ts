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
/** The status `toolApproval` answers with. */
export type ApprovalStatus = {
    type: "approved";
    reason?: string;
} | {
    type: "denied";
    reason?: string;
};
export interface ToolApprovalOptions {
    client?: Assent;
    /** Seconds to wait for the person (default an hour). */
    timeout?: number;
    sessionId?: string;
    audience?: string;
}
/** A `toolApproval` function that asks the person in Assent. Make one for each run (each
 * `generateText` / `streamText` call): its proposals' idempotency keys are the tool-call id
 * under a random key of its own, so a model that reuses ids never gets another run's decision. */
export declare function assentToolApproval(o?: ToolApprovalOptions): ({ toolCall }: {
    toolCall: {
        toolName: string;
        toolCallId: string;
        input: unknown;
    };
}) => Promise<ApprovalStatus>;
