// The Vercel AI SDK adapter with the real `ai` package (pinned) and its own mock model
// (`ai/test`), against the real server: approved, denied with the reason, edited, undecided.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Assent } from "../dist/index.js";
import { assentToolApproval } from "../dist/adapters/ai-sdk.js";
import { serveFor } from "./server.mjs";
import { CALLS, DECISIONS, checkTurn, record } from "./turn.mjs";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A model that makes `calls`, one a step, then says "done"; `seen` gets each tool result it is sent. */
function scripted(calls, seen) {
  let n = 0;
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      for (const m of prompt) for (const part of m.content ?? []) if (part.type === "tool-result") seen.push(JSON.stringify(part.output));
      if (n < calls.length) {
        const [name, input] = calls[n++];
        return { content: [{ type: "tool-call", toolCallId: `call_${n}`, toolName: name, input: JSON.stringify(input) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
      }
      return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
}

test("the person decides each tool call of generateText", async (t) => {
  const s = await serveFor(t);
  const turn = record();
  const deletePost = tool({
    description: "Deletes a post.",
    inputSchema: jsonSchema({ type: "object", properties: { post_id: { type: "number" } }, required: ["post_id"] }),
    execute: turn.deletePost,
  });
  const decided = s.decideInTurn(DECISIONS);
  const client = new Assent({ home: s.home });
  const result = await generateText({
    model: scripted(CALLS, turn.seen),
    tools: { delete_post: deletePost },
    toolApproval: assentToolApproval({ client, sessionId: "ai-1", timeout: 30 }),
    stopWhen: stepCountIs(8),
    prompt: "tidy the blog",
  });
  await decided;
  await checkTurn(s, "ai-1", turn, result.text, "the model is told the edited input to call with");
});

test("undecided is withdrawn and denied; Assent unreachable is denied", async (t) => {
  const s = await serveFor(t);
  const decide = assentToolApproval({ client: new Assent({ home: s.home }), sessionId: "ai-2", timeout: 1 });
  const late = await decide({ toolCall: { toolName: "delete_post", toolCallId: "c1", input: { post_id: 1 } } });
  assert.equal(late.type, "denied");
  assert.match(late.reason, /withdrawn/);
  const asked = await s.call("GET", "/proposals?session_id=ai-2");
  assert.equal(asked.items[0].status, "withdrawn");
  const nowhere = assentToolApproval({ client: new Assent({ home: "/nonexistent/assent" }) });
  const gone = await nowhere({ toolCall: { toolName: "delete_post", toolCallId: "c2", input: {} } });
  assert.equal(gone.type, "denied");
  assert.match(gone.reason, /could not ask the person/);
});

test("a retry gets the same proposal; a reused id, answered or in a new run, a new one", async (t) => {
  const s = await serveFor(t);
  const client = new Assent({ home: s.home });
  const call = { toolCall: { toolName: "delete_post", toolCallId: "call_0", input: { post_id: 7 } } };
  const decide = assentToolApproval({ client, sessionId: "ai-reuse", timeout: 30 });
  let decided = s.decideNext({ outcome: "approve" });
  // Asked twice for the same call before an answer (a retry): one proposal.
  const both = await Promise.all([decide(call), decide(call)]);
  await decided;
  assert.deepEqual(both.map((b) => b.type), ["approved", "approved"]);
  assert.equal((await s.call("GET", "/proposals?session_id=ai-reuse")).items.length, 1);
  // The same id once answered is another call (ids numbered afresh each step) ...
  decided = s.decideNext({ outcome: "reject", reason: "not twice" });
  const again = await decide(call);
  await decided;
  assert.equal(again.type, "denied");
  assert.match(again.reason, /not twice/);
  // ... and another run (an assentToolApproval of its own) never gets an earlier decision.
  decided = s.decideNext({ outcome: "reject", reason: "new run, new question" });
  const other = await assentToolApproval({ client, sessionId: "ai-reuse", timeout: 30 })(call);
  await decided;
  assert.equal(other.type, "denied");
  assert.match(other.reason, /new run/);
  const asked = await s.call("GET", "/proposals?session_id=ai-reuse");
  assert.deepEqual(asked.items.map((p) => p.status).sort(), ["approved", "rejected", "rejected"]);
});
