// The OpenAI Agents SDK (JavaScript) adapter with the real package (pinned) and a scripted Model
// of its own interface (no network), against the real server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, Usage, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";
import { Assent } from "../dist/index.js";
import { runWithAssent } from "../dist/adapters/openai-agents.js";
import { serveFor } from "./server.mjs";
import { CALLS, DECISIONS, checkTurn, record } from "./turn.mjs";

setTracingDisabled(true);

/** Makes `calls`, one a turn, then answers "done"; `seen` gets the tool outputs it is sent. */
function scripted(calls, seen) {
  let n = 0;
  return {
    async getResponse(request) {
      const items = Array.isArray(request.input) ? request.input : [];
      seen.length = 0;
      for (const i of items) if (i.type === "function_call_result") seen.push(JSON.stringify(i.output));
      if (n < calls.length) {
        const [name, args] = calls[n++];
        return { usage: new Usage(), responseId: `r${n}`, output: [{ type: "function_call", id: `fc${n}`, callId: `call_${n}`, name, arguments: JSON.stringify(args), status: "completed" }] };
      }
      return { usage: new Usage(), responseId: "r_end", output: [{ type: "message", id: "m1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }] };
    },
    async *getStreamedResponse() {
      throw new Error("not used");
    },
  };
}

/** The tool the model calls: it deletes the post, and notes its id in `ran`. */
function deleter(ran) {
  return tool({ name: "delete_post", description: "Deletes a post.", parameters: z.object({ post_id: z.number() }),
    needsApproval: true, execute: async ({ post_id }) => { ran.push(post_id); return `deleted ${post_id}`; } });
}

test("approved, rejected and edited tool calls of a run", async (t) => {
  const s = await serveFor(t);
  const turn = record();
  const agent = new Agent({ name: "blog", tools: [deleter(turn.ran)], model: scripted(CALLS, turn.seen) });
  const decided = s.decideInTurn(DECISIONS);
  const result = await runWithAssent(agent, "tidy the blog", { client: new Assent({ home: s.home }), sessionId: "oaj-1", timeout: 30 });
  await decided;
  await checkTurn(s, "oaj-1", turn, result.finalOutput, "the model is told the edited arguments");
});

test("undecided is withdrawn; Assent not running is a clear error", async (t) => {
  const s = await serveFor(t);
  const ran = [];
  const deletePost = tool({ name: "delete_post", description: "Deletes a post.", parameters: z.object({ post_id: z.number() }),
    needsApproval: true, execute: async ({ post_id }) => { ran.push(post_id); return "deleted"; } });
  const seen = [];
  const agent = new Agent({ name: "blog", tools: [deletePost], model: scripted([["delete_post", { post_id: 1 }]], seen) });
  await runWithAssent(agent, "go", { client: new Assent({ home: s.home }), sessionId: "oaj-2", timeout: 1 });
  assert.deepEqual(ran, []);
  assert.match(seen.join(" "), /withdrawn/);
  assert.equal((await s.call("GET", "/proposals?session_id=oaj-2")).items[0].status, "withdrawn");
  const unserved = new Agent({ name: "blog", tools: [deletePost], model: scripted([["delete_post", { post_id: 2 }]], []) });
  await assert.rejects(runWithAssent(unserved, "go", { client: new Assent({ home: "/nonexistent/assent" }) }),
    (e) => e.name === "AssentNotRunning");
  assert.deepEqual(ran, []);
});

/** Makes every call of `calls` in one turn (ids `call_0`, `call_1`, ... as local model servers
 * number them), then answers "done". */
function oneTurn(calls) {
  return {
    async getResponse(request) {
      const items = Array.isArray(request.input) ? request.input : [];
      if (!items.some((i) => i.type === "function_call_result")) {
        return { usage: new Usage(), responseId: "r1", output: calls.map(([name, args], n) =>
          ({ type: "function_call", id: `fc${n}`, callId: `call_${n}`, name, arguments: JSON.stringify(args), status: "completed" })) };
      }
      return { usage: new Usage(), responseId: "r_end", output: [{ type: "message", id: "m1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }] };
    },
    async *getStreamedResponse() {
      throw new Error("not used");
    },
  };
}

test("a reused call id in a new run asks the person again", async (t) => {
  const s = await serveFor(t);
  const ran = [];
  const deletePost = deleter(ran);
  const client = new Assent({ home: s.home });
  const go = async (decision) => {
    const decided = s.decideNext(decision);
    const agent = new Agent({ name: "blog", tools: [deletePost], model: oneTurn([["delete_post", { post_id: 7 }]]) });
    await runWithAssent(agent, "go", { client, sessionId: "oaj-reuse", timeout: 30 });
    await decided;
  };
  await go({ outcome: "approve" });
  assert.deepEqual(ran, [7]);
  await go({ outcome: "reject", reason: "once is enough" });
  assert.deepEqual(ran, [7], "the second run's call_0 waited for the person, who said no");
  const asked = await s.call("GET", "/proposals?session_id=oaj-reuse");
  assert.deepEqual(asked.items.map((p) => p.status).sort(), ["approved", "rejected"]);
});

test("every call of a turn outlives the lease while the person decides", async (t) => {
  const s = await serveFor(t);
  const ran = [];
  const agent = new Agent({ name: "blog", tools: [deleter(ran)],
    model: oneTurn([["delete_post", { post_id: 1 }], ["delete_post", { post_id: 2 }]]) });
  // The person leaves both calls of the turn for 17 s, past the 15 s lease the adapter asks
  // for plus the server's one-second sweep: as short as shows a lapse.
  const slow = s.decideSlowly(2, 17);
  const result = await runWithAssent(agent, "go", { client: new Assent({ home: s.home }), timeout: 60 });
  const answers = await slow;
  assert.deepEqual(answers.map((a) => a.status), ["approved", "approved"], "neither was withdrawn before the person decided");
  assert.deepEqual(ran.sort(), [1, 2]);
  assert.equal(result.finalOutput, "done");
});

test("a refused argument is a denial the model reads, and the turn goes on", async (t) => {
  // One call of a three-call turn has an argument Assent refuses (an integer beyond 2^53-1):
  // it is rejected with Assent's reason, the other two go to the person and run once approved.
  const s = await serveFor(t);
  const ran = [];
  const agent = new Agent({ name: "blog", tools: [deleter(ran)],
    model: oneTurn([["delete_post", { post_id: 1 }], ["delete_post", { post_id: 2 ** 60 }], ["delete_post", { post_id: 3 }]]) });
  const both = s.decideSlowly(2, 0);
  const result = await runWithAssent(agent, "go", { client: new Assent({ home: s.home }), timeout: 60 });
  await both;
  assert.deepEqual(ran.sort(), [1, 3]);
  assert.equal(result.finalOutput, "done");
  const told = JSON.stringify(result.history ?? result.state);
  assert.ok(told.includes("Assent refused this call"), told.slice(0, 2000));
  assert.deepEqual((await s.call("GET", "/proposals?status=pending")).items, []);
});

test("the defaults a model left out are shown and never run unseen", async (t) => {
  // A tool that is not strict: the model leaves out `recursive`, whose default (true) is filled
  // in and shown. Approved as shown it runs with it; an edit that deletes it is rejected as unfit.
  const s = await serveFor(t);
  const ran = [];
  const parameters = { type: "object", properties: { path: { type: "string" }, recursive: { type: "boolean", default: true } },
    required: ["path"], additionalProperties: true };
  const deletePath = tool({ name: "delete_path", description: "Deletes a path.", strict: false, needsApproval: true, parameters,
    execute: async ({ path, recursive = true }) => { ran.push([path, recursive]); return `deleted ${path}`; } });
  for (const [decision, runs] of [[{ outcome: "approve" }, [["build", true]]],
    [{ outcome: "approve", edits: { input: { path: "build" } } }, []]]) {
    ran.length = 0;
    const agent = new Agent({ name: "fs", tools: [deletePath], model: oneTurn([["delete_path", { path: "build" }]]) });
    const decided = s.decideNext(decision);
    const result = await runWithAssent(agent, "go", { client: new Assent({ home: s.home }), timeout: 30 });
    await decided;
    const shown = (await s.call("GET", "/proposals?limit=1")).items[0].payload.input;
    assert.deepEqual(shown, { path: "build", recursive: true });
    assert.deepEqual(ran, runs);
    if (!runs.length) assert.ok(JSON.stringify(result.history).includes("without `recursive`"));
  }
});
