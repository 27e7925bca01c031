import { describe, expect, it } from "vitest";
import { tauriBackend, type Change, type QuitRequest } from "./api";
import { answer } from "./ipc-mock";

describe("the Tauri backend", () => {
  it("sends each command with the arguments the host's commands take (camelCase, null for none)", async () => {
    const ipc = answer({});
    const b = await tauriBackend();
    // Each call fails (nothing answers here): only what was sent matters.
    const sent = async (f: () => Promise<unknown>) => {
      const before = ipc.calls.length;
      await f().catch(() => {});
      return ipc.calls.slice(before).map((c) => [c.cmd, c.args]);
    };
    expect(await sent(() => b.list({ status: "", agent: "default", limit: 100, cursor: null }))).toEqual([["list_proposals", { status: null, agent: "default", limit: 100, cursor: null }]]);
    expect(await sent(() => b.list({ status: "pending", groupId: "g1" }))).toEqual([["list_proposals", { status: "pending", groupId: "g1" }]]);
    expect(await sent(() => b.get("p_1"))).toEqual([["get_proposal", { id: "p_1" }]]);
    expect(await sent(() => b.decide("p_1", "approve", { allowSimilar: { expires_in: 900 }, seen: "h" }))).toEqual([
      ["decide", { id: "p_1", outcome: "approve", allowSimilar: { expires_in: 900 }, seen: "h" }],
    ]);
    expect(await sent(() => b.decide("p_1", "refine", { feedback: "smaller" }))).toEqual([["decide", { id: "p_1", outcome: "refine", feedback: "smaller" }]]);
    expect(await sent(() => b.decideBatch([{ id: "p_1", outcome: "reject", reason: "no" }]))).toEqual([["decide_batch", { items: [{ id: "p_1", outcome: "reject", reason: "no" }] }]]);
    expect(await sent(() => b.decideGroup("g1", "bot", null, "reject", "no"))).toEqual([["decide_group", { groupId: "g1", agent: "bot", node: null, outcome: "reject", reason: "no" }]]);
    expect(await sent(() => b.rules())).toEqual([["list_rules", { after: null }]]);
    expect(await sent(() => b.rules(200))).toEqual([["list_rules", { after: 200 }]]);
    expect(await sent(() => b.addRule({ effect: "deny", match: { tool: "Bash" }, everything: false }))).toEqual([
      ["add_rule", { rule: { effect: "deny", match: { tool: "Bash" }, everything: false } }],
    ]);
    expect(await sent(() => b.similarRule("p_1"))).toEqual([["similar_rule", { id: "p_1" }]]);
    expect(await sent(() => b.rendered(12.5))).toEqual([["ui_ready", { firstPageMs: 12.5 }]]);
    expect(await sent(() => b.setAutostart(true))).toEqual([["set_autostart", { enabled: true }]]);
    expect(await sent(() => b.addCredential("gh", "bearer", ["api.github.com"], "s3cret"))).toEqual([
      ["add_credential", { name: "gh", scheme: "bearer", hosts: ["api.github.com"], secret: "s3cret" }],
    ]);
    expect(await sent(() => b.remoteEnable("https://desk.example"))).toEqual([["remote_enable", { origin: "https://desk.example", port: null, pushAfter: null }]]);
    expect(await sent(() => b.remoteEnable(undefined, 0))).toEqual([["remote_enable", { origin: null, port: null, pushAfter: 0 }]]);
    expect(await sent(() => b.remotePair())).toEqual([["remote_pair", { name: null }]]);
    expect(await sent(() => b.quit())).toEqual([["quit_app", {}]]);
  });

  it("passes on the host's error as it came", async () => {
    answer({ get_proposal: () => Promise.reject({ code: "not_found", message: "no proposal `p_1`" }) });
    await expect((await tauriBackend()).get("p_1")).rejects.toEqual({ code: "not_found", message: "no proposal `p_1`" });
  });

  it("hears the host's events until it stops listening", async () => {
    const ipc = answer({});
    const b = await tauriBackend();
    const changes: Change[] = [];
    const quits: QuitRequest[] = [];
    const opened: string[] = [];
    const offChange = await b.onChange((c) => changes.push(c));
    const offQuit = await b.onQuitRequested((q) => quits.push(q));
    await b.onOpen((id) => opened.push(id));
    await ipc.change({ type: "rules.changed", rule_id: "r_1" });
    await ipc.emit("assent://event", { type: "lagged" });
    await ipc.emit("assent://quit-requested", { waiting: 2, pending: 5 });
    await ipc.emit("assent://open", { id: "p_1" });
    offChange();
    offQuit();
    await ipc.change({ type: "rules.changed", rule_id: "r_2" });
    await ipc.emit("assent://quit-requested", { waiting: 0, pending: 1 });
    expect(changes).toEqual([{ type: "rules.changed", rule_id: "r_1" }, { type: "lagged" }]);
    expect(quits).toEqual([{ waiting: 2, pending: 5 }]);
    expect(opened).toEqual(["p_1"]);
  });
});
