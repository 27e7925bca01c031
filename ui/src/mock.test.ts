import { describe, expect, it } from "vitest";
import { MockBackend } from "./mock";
import type { Change } from "./api";
import type { Proposal } from "./bindings/Proposal";

describe("the in-memory backend", () => {
  it("pages with a cursor, newest first", async () => {
    const m = new MockBackend({ seed: 250 });
    const first = await m.list({ limit: 100 });
    expect(first.items).toHaveLength(100);
    const second = await m.list({ limit: 100, cursor: first.next_cursor });
    expect(second.items[0].created_at <= first.items[99].created_at).toBe(true);
    expect(new Set([...first.items, ...second.items].map((p) => p.id)).size).toBe(200);
  });
  it("decides once, announces it, and refuses a second decision", async () => {
    const m = new MockBackend();
    const seen: Change[] = [];
    await m.onChange((c) => seen.push(c));
    const id = (await m.list({ status: "pending", kind: "tool.call" })).items[0].id;
    const p = await m.decide(id, "approve");
    expect(p.status).toBe("approved");
    expect(seen.some((c) => c.type === "proposal.updated" && c.proposal.id === id)).toBe(true);
    await expect(m.decide(id, "reject", { reason: "no" })).rejects.toMatchObject({ code: "invalid_state" });
  });
  it("reports already-settled batch items as skipped", async () => {
    const m = new MockBackend();
    const [a, b] = (await m.list({ status: "pending" })).items;
    await m.decide(a.id, "approve");
    const r = await m.decideBatch([{ id: a.id, outcome: "approve" }, { id: b.id, outcome: "approve" }]);
    expect([r.decided, r.skipped]).toEqual([1, 1]);
  });

  it("derives the narrowest similar rule: command words, a folder, a method and host", async () => {
    const m = new MockBackend();
    const tool = m.proposals.find((p) => p.kind === "tool.call" && p.status === "pending") as Proposal;
    const bash = (id: string, command: string) => {
      const p = structuredClone(tool);
      p.id = id;
      p.payload = { tool: "Bash", input: { command } };
      m.proposals.push(p);
      return id;
    };
    expect((await m.similarRule(bash("p_a", "npm test -- --watch"))).match.input).toBe("npm test");
    expect((await m.similarRule(bash("p_b", "git commit -m 'a b'"))).match.input).toBe("git commit");
    expect((await m.similarRule(bash("p_c", "rm -rf build"))).match.input).toBe("rm -rf build");
    expect((await m.similarRule(bash("p_d", "ls && rm x"))).match.input).toBeUndefined();
    const s = await m.similarRule(tool.id);
    expect(s).toEqual({
      match: { agent: "default", kind: "tool.call", tool: "Bash", input: "cargo test", confine: "workspace" },
      description: "allow agent default to run `cargo test …` with tool `Bash`",
    });
    const file = m.proposals.find((p) => p.id === "p_group0") as Proposal;
    expect((await m.similarRule(file.id)).match).toEqual({ agent: "release-bot", kind: "file.write", path: "/home/me/project/*" });
    const http = m.proposals.find((p) => p.kind === "http.request" && p.status === "pending") as Proposal;
    expect((await m.similarRule(http.id)).match).toEqual({ agent: "default", kind: "http.request", method: "POST", host: "api.github.com", credential: "github" });
  });
  it("approves with allow similar: saves the rule, announces it, and the rule allows the next one", async () => {
    const m = new MockBackend();
    const seen: Change[] = [];
    await m.onChange((c) => seen.push(c));
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
    const d = await m.decide(id, "approve", { allowSimilar: { expires_in: 900 } });
    expect(d.status).toBe("approved");
    expect(d.rule?.description).toBe("allow agent default to run `cargo test …` with tool `Bash`");
    expect(d.rule?.note).toBe(`allowed like proposal ${id}`);
    const left = Date.parse(d.rule?.expires_at ?? "") - Date.now();
    expect(left > 890_000 && left <= 900_000).toBe(true);
    expect(seen.some((c) => c.type === "rules.changed" && c.rule_id === d.rule?.id)).toBe(true);
    const again = structuredClone(m.proposals.find((p) => p.id === id) as Proposal);
    Object.assign(again, { id: "p_again", status: "pending", decision: null, payload: { tool: "Bash", input: { command: "cargo test --release" } } });
    m.propose(again);
    expect(again.status).toBe("approved");
    expect(again.decision?.rule?.id).toBe(d.rule?.id);
    expect(m.ruleList.find((r) => r.id === d.rule?.id)?.matched).toBe(1);
    await expect(m.decide("p_group0", "reject", { reason: "no", allowSimilar: {} })).rejects.toMatchObject({ code: "invalid_allow_similar" });
  });
  it("refuses an allow that names nothing unless everything is said", async () => {
    const m = new MockBackend();
    await expect(m.addRule({ effect: "allow", match: {}, everything: false })).rejects.toMatchObject({ code: "too_broad" });
    await expect(m.addRule({ effect: "allow", match: { agent: "x" }, everything: true })).rejects.toMatchObject({ code: "invalid_match" });
    await expect(m.addRule({ effect: "allow", match: { kind: "http.request", tool: "Bash" }, everything: false })).rejects.toMatchObject({ code: "invalid_match" });
    await expect(m.addRule({ effect: "allow", match: { credential: "nope" }, everything: false })).rejects.toMatchObject({ code: "unknown_credential" });
    await expect(m.addRule({ effect: "allow", match: { tool: "Bash" }, everything: false, expires_in: 0 })).rejects.toMatchObject({ code: "invalid_expiry" });
    expect((await m.addRule({ effect: "allow", match: {}, everything: true })).everything).toBe(true);
  });
  it("lets a deny prefix see every command of a line, and an allow only a plain one", async () => {
    const m = new MockBackend();
    m.ruleList = [];
    await m.addRule({ effect: "allow", match: { tool: "Bash", input: "ls" }, everything: false });
    await m.addRule({ effect: "deny", match: { tool: "Bash", input: "rm" }, everything: false });
    const tool = m.proposals.find((p) => p.id === "p_xw3z55xmqfu3hcl2bg6s3hpfxe") as Proposal;
    const run = (id: string, command: string) => {
      const p = structuredClone(tool);
      p.id = id;
      p.payload = { tool: "Bash", input: { command } };
      m.propose(p);
      return p.status;
    };
    expect(run("p_1", "ls -la")).toBe("approved");
    expect(run("p_2", "ls && rm -rf ~")).toBe("rejected");
    expect(run("p_3", "ls; curl x | sh")).toBe("pending");
    expect(run("p_4", "lsof")).toBe("pending");
  });

  it("keeps the login setting in memory, off at first, and fails once when told to", async () => {
    const m = new MockBackend();
    expect(await m.autostart()).toBe(false);
    expect(await m.setAutostart(true)).toBe(true);
    expect(await m.autostart()).toBe(true);
    m.autostartError = "refused";
    await expect(m.setAutostart(false)).rejects.toBe("refused");
    expect(await m.autostart()).toBe(true);
    expect(await m.setAutostart(false)).toBe(false);
  });

  it("announces the tray's Quit to its listeners until they stop listening", async () => {
    const m = new MockBackend();
    const heard: { waiting: number; pending: number }[] = [];
    const off = await m.onQuitRequested((q) => heard.push(q));
    m.requestQuit(2, 5);
    m.requestQuit();
    off();
    m.requestQuit(3, 3);
    const pending = m.proposals.filter((p) => p.status === "pending").length;
    expect(heard).toEqual([{ waiting: 2, pending: 5 }, { waiting: 1, pending }]);
    expect((await m.info()).commit).toBe("3f2a9c1");
  });
});
