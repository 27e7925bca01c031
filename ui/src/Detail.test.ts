import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import Detail from "./Detail.svelte";
import Toasts from "./Toasts.svelte";
import { toasts } from "./toasts.svelte";
import { MockBackend } from "./mock";
import type { Proposal } from "./bindings/Proposal";
import type { AuditEntry } from "./bindings/AuditEntry";

describe("the detail view", () => {
  afterEach(cleanup);

  it("never shows one proposal with buttons that act on another, while the other loads", async () => {
    const m = new MockBackend();
    const [a, b] = m.proposals.filter((x) => x.status === "pending");
    if (!a || !b) throw new Error("fixture");
    // The second one loads slowly (a large proposal on a slow link).
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const get = m.get.bind(m);
    m.get = async (id: string) => {
      if (id === b.id) await gate;
      return get(id);
    };
    const { rerender } = render(Detail, { backend: m, id: a.id });
    await screen.findByTestId("approve");
    await rerender({ backend: m, id: b.id });
    // While B loads: A is gone, and nothing can be decided.
    expect(screen.queryByTestId("approve")).toBeNull();
    expect(screen.getByText("Loading…")).toBeTruthy();
    release();
    await fireEvent.click(await screen.findByTestId("approve"));
    await waitFor(() => expect(m.calls.filter((c) => c.name === "decide").map((c) => c.args[0])).toEqual([b.id]));
    expect((m.calls.find((c) => c.name === "decide")?.args[2] as { seen?: string }).seen).toBe(`seen:${b.id}`);
    expect(m.proposals.find((x) => x.id === a.id)?.status).toBe("pending");
  });

  it("shows Assent's diff with the hidden character marked", async () => {
    const m = new MockBackend();
    render(Detail, { backend: m, id: "p_iqgvopaka4n7slxa5lqrbpr4cu" });
    const diff = await screen.findByTestId("diff");
    expect(diff.textContent).toContain("line two");
    expect(diff.querySelector(".mark")?.textContent).toBe("⟦U+200B⟧");
    expect(screen.getByRole("alert").textContent).toContain("ZERO WIDTH SPACE");
  });

  it("shows the agent's words as text, never as HTML", async () => {
    const m = new MockBackend();
    const p = m.proposals.find((x) => x.kind === "tool.call");
    if (!p) throw new Error("fixture");
    p.title = '<img src=x onerror="window.pwned=1">';
    p.summary = "<b>bold</b>";
    const { container } = render(Detail, { backend: m, id: p.id });
    await screen.findByText('<img src=x onerror="window.pwned=1">');
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector(".awsummary b")).toBeNull();
  });

  it("shows what the client reported and Assent's notes apart from the agent's words", async () => {
    const m = new MockBackend();
    const p = m.proposals.find((x) => x.kind === "tool.call");
    if (!p || p.preview.type !== "tool.call") throw new Error("fixture");
    p.title = null;
    p.summary = null;
    Object.assign(p.preview, { cwd: "/home/me/project", client: "Codex's permission hook", permission_mode: "default", notes: ["Codex cannot run an edited call."] });
    render(Detail, { backend: m, id: p.id });
    const note = await screen.findByTestId("assent-note");
    expect(note.textContent).toBe("Assent: Codex cannot run an edited call.");
    const ctx = screen.getByTestId("tool-context").textContent ?? "";
    expect(ctx).toContain("/home/me/project");
    expect(ctx).toContain("Codex's permission hook");
    // No agent's words: nothing is shown as the agent's.
    expect(screen.queryByLabelText("The agent's own words")).toBeNull();
  });

  it("says a large input's size before its body, lays out only its start, and shows all when asked", async () => {
    const m = new MockBackend();
    const p = m.proposals.find((x) => x.kind === "tool.call" && x.status === "pending");
    if (!p || p.preview.type !== "tool.call") throw new Error("fixture");
    const command = `cat <<'EOF'\n${"é".repeat(1_900_000)}\nEOF\nrm -rf ~/end-of-the-input`;
    p.payload = { tool: "Bash", input: { command } };
    p.preview = { ...p.preview, input: { command }, input_text: JSON.stringify({ command }, null, 2) };
    render(Detail, { backend: m, id: p.id });
    const large = await screen.findByTestId("large");
    expect(large.textContent).toContain("Large input: 3.8 MB");
    expect(large.textContent).toContain("your decision covers all of it");
    const input = screen.getByTestId("tool-input");
    // The size is said before the body, and the decision is still at hand.
    expect(large.compareDocumentPosition(input) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(input.textContent?.length).toBe(64_000);
    expect(input.textContent).not.toContain("end-of-the-input");
    expect(screen.getByTestId("approve")).toBeTruthy();
    await fireEvent.click(screen.getByTestId("show-whole"));
    await waitFor(() => expect(screen.getByTestId("tool-input").textContent).toContain("rm -rf ~/end-of-the-input"));
    expect(screen.getByTestId("large").textContent).toContain("All of it is shown");
    expect(screen.queryByTestId("show-whole")).toBeNull();
  });

  it("takes a message away at a tap", async () => {
    toasts.splice(0);
    const m = new MockBackend();
    const [a] = m.proposals.filter((x) => x.status === "pending");
    if (!a) throw new Error("fixture");
    render(Toasts);
    render(Detail, { backend: m, id: a.id });
    await fireEvent.click(await screen.findByTestId("approve"));
    await fireEvent.click(await screen.findByText("Approved"));
    expect(screen.queryAllByTestId("toast")).toHaveLength(0);
  });

  it("says who a decision's receipt is for, and that the decision carries one", async () => {
    const m = new MockBackend();
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
    const p = m.proposals.find((x) => x.id === id);
    if (!p) throw new Error("fixture");
    p.audience = "blog";
    render(Detail, { backend: m, id });
    expect((await screen.findByTestId("detail-audience")).textContent).toBe("receipt for blog");
    expect(screen.queryByTestId("decision-receipt")).toBeNull();
    await fireEvent.click(screen.getByTestId("approve"));
    const receipt = await screen.findByTestId("decision-receipt");
    expect(receipt.textContent).toContain("signed for blog");
  });

  it("rejects with the reason the person typed", async () => {
    const m = new MockBackend();
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
    render(Detail, { backend: m, id });
    await fireEvent.click(await screen.findByTestId("reject"));
    const confirm = screen.getByTestId("confirm-reject") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("reason"), { target: { value: "not on main" } });
    await fireEvent.click(confirm);
    await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("rejected"));
    expect(m.calls.find((c) => c.name === "decide")?.args).toEqual([id, "reject", { reason: "not on main", seen: `seen:${id}` }]);
  });

  it("approves an edited tool input", async () => {
    const m = new MockBackend();
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
    render(Detail, { backend: m, id });
    await fireEvent.click(await screen.findByTestId("edit"));
    const editor = document.getElementById("editor") as HTMLTextAreaElement;
    await fireEvent.input(editor, { target: { value: '{"command": "cargo test -q"}' } });
    await fireEvent.click(screen.getByText("Approve edited", { selector: ".form button" }));
    await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("approved"));
    expect(m.calls.find((c) => c.name === "decide")?.args[2]).toEqual({ edits: { input: { command: "cargo test -q" } }, seen: expect.stringMatching(/^seen:/) });
  });

  it("shows a preview no shape fits as it was stored, and nothing else", async () => {
    const m = new MockBackend();
    const p = m.proposals.find((x) => x.kind === "tool.call");
    if (!p) throw new Error("fixture");
    p.preview = { type: "unreadable", raw: { type: "tool.call", tool: 7 } };
    render(Detail, { backend: m, id: p.id });
    const block = await screen.findByTestId("unreadable");
    expect(block.textContent).toContain('"tool": 7');
    expect(screen.queryByTestId("diff")).toBeNull();
  });

  describe("approve and allow similar", () => {
    const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe"; // Bash `cargo test`, pending
    beforeEach(() => void toasts.splice(0));

    it.each([
      ["15 min", 900, "for 15 min"],
      ["1 hour", 3600, "for 1 hour"],
      ["1 day", 86400, "for 1 day"],
      ["Until removed", null, "until removed"],
    ] as const)("shows the rule in words and saves it for %s", async (label, secs, words) => {
      const m = new MockBackend();
      const rulesBefore = m.ruleList.length;
      render(Toasts);
      render(Detail, { backend: m, id });
      await fireEvent.click(await screen.findByTestId("allow-similar"));
      const panel = await screen.findByTestId("similar");
      // The rule is shown, not saved, and the proposal is not decided yet.
      expect(screen.getByTestId("similar-words").textContent?.replace(/\s+/g, " ").trim()).toBe("allow agent default to run cargo test … with tool Bash for 1 hour");
      expect(m.ruleList).toHaveLength(rulesBefore);
      expect(m.calls.some((c) => c.name === "decide")).toBe(false);
      await fireEvent.click(screen.getAllByTestId("similar-for").find((b) => b.textContent === label) as HTMLElement);
      expect(screen.getByTestId("similar-lasting").textContent).toBe(words);
      expect(panel.textContent).toContain(words);
      await fireEvent.click(screen.getByTestId("confirm-similar"));
      await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("approved"));
      expect(m.calls.filter((c) => c.name === "decide").map((c) => c.args)).toEqual([[id, "approve", { allowSimilar: { expires_in: secs }, seen: `seen:${id}` }]]);
      const saved = m.ruleList[m.ruleList.length - 1];
      expect(m.ruleList).toHaveLength(rulesBefore + 1);
      expect(saved.match).toEqual({ agent: "default", kind: "tool.call", tool: "Bash", input: "cargo test", confine: "workspace" });
      expect(saved.expires_at === null).toBe(secs === null);
      const toast = await screen.findByText(/Rule saved/);
      expect(toast.textContent).toContain("allow agent default to run cargo test … with tool Bash");
      expect(toast.textContent).toContain(words);
    });

    it("saves nothing and decides nothing when cancelled", async () => {
      const m = new MockBackend();
      const rulesBefore = m.ruleList.length;
      render(Detail, { backend: m, id });
      await fireEvent.click(await screen.findByTestId("allow-similar"));
      await screen.findByTestId("similar");
      await fireEvent.click(screen.getByTestId("cancel-similar"));
      expect(screen.queryByTestId("similar")).toBeNull();
      expect(m.calls.filter((c) => c.name === "decide")).toHaveLength(0);
      expect(m.ruleList).toHaveLength(rulesBefore);
      expect(screen.getByTestId("status-badge").textContent).toBe("pending");
    });
  });

  describe("a proposal a rule decided", () => {
    const bash = (m: MockBackend, id: string, command: string): Proposal => {
      const p = structuredClone(m.proposals.find((x) => x.id === "p_xw3z55xmqfu3hcl2bg6s3hpfxe")) as Proposal;
      p.id = id;
      p.payload = { tool: "Bash", input: { command } };
      m.propose(p);
      return p;
    };

    it("says which rule refused it", async () => {
      const m = new MockBackend();
      m.ruleList = [];
      await m.addRule({ effect: "deny", match: { tool: "Bash", input: "git push" }, everything: false, note: "not from here" });
      const p = bash(m, "p_pushed", "git push origin main");
      expect(p.status).toBe("rejected");
      render(Detail, { backend: m, id: p.id });
      const label = await screen.findByTestId("decided-by-rule");
      expect(label.textContent?.replace(/\s+/g, " ")).toContain("Refused by rule: refuse to let any agent run git push … with tool Bash");
    });

    it("says which rule allowed it", async () => {
      const m = new MockBackend();
      m.ruleList = [];
      await m.addRule({ effect: "allow", match: { agent: "default", tool: "Bash", input: "ls" }, everything: false });
      const p = bash(m, "p_listed", "ls -la");
      expect(p.status).toBe("approved");
      render(Detail, { backend: m, id: p.id });
      const label = await screen.findByTestId("decided-by-rule");
      expect(label.textContent?.replace(/\s+/g, " ")).toContain("Allowed by rule: allow agent default to run ls … with tool Bash");
      expect(screen.queryByTestId("allow-similar")).toBeNull();
    });

    it("says a command a rule allowed ran confined", async () => {
      const m = new MockBackend();
      m.ruleList = [];
      await m.addRule({ effect: "allow", match: { tool: "Bash", input: "ls", confine: "read" }, everything: false });
      const p = bash(m, "p_confined", "ls -la");
      expect(p.decision?.confine).toBe("read");
      render(Detail, { backend: m, id: p.id });
      const label = await screen.findByTestId("confined");
      expect(label.textContent).toContain("Ran confined (read)");
    });

    it("says a rule decided it when the rule's words were not kept", async () => {
      const m = new MockBackend();
      const p = m.proposals.find((x) => x.decision?.channel === "rule" && x.decision.outcome === "approve");
      if (!p?.decision) throw new Error("seed");
      p.decision.rule = null;
      render(Detail, { backend: m, id: p.id });
      expect((await screen.findByTestId("decided-by-rule")).textContent).toContain("Allowed by a rule.");
    });

    it("shows nothing of the sort on a proposal the person decided", async () => {
      const m = new MockBackend();
      const id = "p_xw3z55xmqfu3hcl2bg6s3hpfxe";
      await m.decide(id, "approve");
      render(Detail, { backend: m, id });
      await screen.findByTestId("detail");
      expect(screen.queryByTestId("decided-by-rule")).toBeNull();
    });
  });

  describe("the node, on a team store", () => {
    const id = "p_appliedexample000000000000"; // approved by owner through the CLI, then applied
    const text = (testId: string) => screen.getByTestId(testId).textContent?.replace(/\s+/g, " ").trim();
    const history = () => [...screen.getByTestId("audit").querySelectorAll("li")].map((li) => li.textContent?.replace(/\s+/g, " ") ?? "");

    it("names the node that received it, the one it was decided on, and each change's", async () => {
      const m = new MockBackend();
      const p = m.proposals.find((x) => x.id === id);
      if (!p?.decision) throw new Error("seed");
      p.node = "alpha";
      p.decision.by = "ben";
      p.decision.node = "beta";
      const created = m.audits.get(id)?.[0];
      if (!created) throw new Error("seed");
      created.node = "alpha";
      m.audits.get(id)?.push({ ...created, seq: 99n, actor: "ben", node: "beta", channel: "app", from: "pending", to: "approved" } as AuditEntry);
      render(Detail, { backend: m, id });
      await screen.findByTestId("detail");
      expect(text("detail-agent")).toBe("agent default on alpha");
      expect(text("decision-by")).toMatch(/^by ben on beta via cli · /);
      const rows = history();
      expect(rows).toHaveLength(2);
      expect(rows[0]).toContain("by default on alpha via agent");
      expect(rows[1]).toContain("by ben on beta via app");
    });

    it("names no node on a single-user store", async () => {
      const m = new MockBackend();
      render(Detail, { backend: m, id });
      await screen.findByTestId("detail");
      expect(text("detail-agent")).toBe("agent default");
      expect(text("decision-by")).toMatch(/^by owner via cli · /);
      const rows = history();
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r).not.toContain(" on ");
      expect(rows[0]).toContain("by default via agent");
    });
  });
});
