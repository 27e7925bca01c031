// The turn both framework adapters' tests run: the model deletes four posts, one call a step,
// and the person approves the first, rejects the second, edits the third and asks for changes
// to the fourth.
import assert from "node:assert/strict";

/** The model's calls, as [tool, input]. */
export const CALLS = [["delete_post", { post_id: 7 }], ["delete_post", { post_id: 9 }], ["delete_post", { post_id: 10 }], ["delete_post", { post_id: 12 }]];

/** The person's decision on each call, in turn. */
export const DECISIONS = [{ outcome: "approve" }, { outcome: "reject", reason: "keep pricing" },
  { outcome: "approve", edits: { input: { post_id: 11 } } }, { outcome: "refine", feedback: "archive it instead" }];

/** What a turn records: `ran`, the post ids its tool deleted (`deletePost`, the tool's function),
 * and `seen`, the tool results the model was sent. */
export function record() {
  const ran = [];
  return { ran, seen: [], deletePost: async ({ post_id }) => { ran.push(post_id); return `deleted ${post_id}`; } };
}

/** What the turn came to: only the call approved as made ran, the model was sent each decision
 * (`edited`: what the edit's check says when it fails), it ended with "done" (`text`), and each
 * call was proposed in the session `sessionId` of the server `s`. */
export async function checkTurn(s, sessionId, { ran, seen }, text, edited) {
  assert.deepEqual(ran, [7], "only the call approved as made ran");
  const joined = seen.join(" | ");
  assert.match(joined, /deleted 7/);
  assert.match(joined, /keep pricing/);
  assert.match(joined, /post_id\\?":11/, edited);
  assert.match(joined, /archive it instead/, "a request for changes reaches the model");
  assert.equal(text, "done");
  const asked = await s.call("GET", `/proposals?session_id=${sessionId}`);
  assert.deepEqual(asked.items.map((p) => p.payload.input.post_id).sort((a, b) => a - b), [7, 9, 10, 12]);
}
