import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor } from "@testing-library/svelte";
import Detail from "./Detail.svelte";
import Toasts from "./Toasts.svelte";
import { toasts } from "./toasts.svelte";
import { tauriBackend } from "./api";
import { answer, type Args, type Handler } from "./ipc-mock";
import * as sample from "./sample";
import type { Proposal } from "./bindings/Proposal";
import type { Decision } from "./bindings/Decision";
import type { Status } from "./bindings/Status";

/**
 * Answers `get_proposal` for `p` as it is now, and `decide` by moving it to `status` (what the
 * backend would answer; `null`: the test decides nothing), with `handlers` for anything else.
 */
function showing(p: Proposal, decide: { status: Status; decision?: Partial<Decision>; rule?: unknown } | null = null, handlers: Record<string, Handler> = {}) {
  let now = p;
  const ipc = answer({
    get_proposal: () => sample.detail(now),
    decide: (a: Args) => {
      if (!decide) throw { code: "unexpected", message: "this test decides nothing" };
      now = sample.decided(now, decide.status, { outcome: a.outcome as Decision["outcome"], reason: (a.reason as string) ?? null, ...decide.decision });
      return { ...now, rule: decide.rule ?? null };
    },
    ...handlers,
  });
  return ipc;
}

describe("the detail view", () => {
  afterEach(cleanup);

  it("never shows one proposal with buttons that act on another, while the other loads", async () => {
    const a = sample.proposal("tc");
    const b = sample.proposal("fw");
    // The second one loads slowly (a large proposal on a slow link).
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const ipc = answer({
      get_proposal: async ({ id }) => {
        if (id === b.id) await gate;
        return sample.detail(id === a.id ? a : b);
      },
      decide: () => ({ ...sample.decided(b, "applied", { outcome: "approve" }), rule: null }),
    });
    const backend = await tauriBackend();
    const { rerender } = render(Detail, { backend, id: a.id });
    await screen.findByTestId("approve");
    await rerender({ backend, id: b.id });
    // While B loads: A is gone, and nothing can be decided.
    expect(screen.queryByTestId("approve")).toBeNull();
    expect(screen.getByText("Loading…")).toBeTruthy();
    release();
    await fireEvent.click(await screen.findByTestId("approve"));
    // The one decision is B's, and names the payload shown as B's.
    await waitFor(() => expect(ipc.args("decide")).toEqual([{ id: b.id, outcome: "approve", seen: sample.payloadHash(b.id) }]));
  });

  it("says which box an approval runs a command in, and runs it unconfined only when chosen apart", async () => {
    const boxed = (id: string) => {
      const p = sample.bash(id, "npm test");
      if (p.preview.type === "tool.call") p.preview.runs_in = "workspace";
      return p;
    };
    const p = boxed("p_boxed");
    const ipc = showing(p, { status: "approved", decision: { confine: "workspace" } });
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const line = await screen.findByTestId("runs-in");
    expect(line.textContent).toContain("Approving runs it in the workspace box");
    expect(screen.getByTestId("approve").textContent).toContain("Approve");
    // The default sends no `run`: the server runs it in the box it named.
    await fireEvent.click(screen.getByTestId("approve"));
    await waitFor(() => expect(ipc.args("decide")).toEqual([{ id: p.id, outcome: "approve", seen: sample.payloadHash(p.id) }]));
    expect((await screen.findByTestId("decision-runs-in")).textContent).toContain("the workspace box");
    cleanup();
    // Unconfined: a separate choice that turns the button red and says what it means.
    const q = boxed("p_unboxed");
    const ipc2 = showing(q, { status: "approved" });
    render(Detail, { backend: await tauriBackend(), id: q.id });
    await fireEvent.click(await screen.findByTestId("run-unconfined"));
    expect(screen.getByTestId("runs-in").textContent).toContain("Unconfined: approving runs it as the client runs it");
    const approve = screen.getByTestId("approve");
    expect(approve.textContent).toContain("Approve unconfined");
    expect(approve.className).toContain("danger");
    await fireEvent.click(approve);
    await waitFor(() => expect(ipc2.args("decide")).toEqual([{ id: q.id, outcome: "approve", seen: sample.payloadHash(q.id), run: "unconfined" }]));
    expect((await screen.findByTestId("decision-runs-in")).textContent).toContain("unconfined");
  });

  it("says the hosts a box reaches, and takes them away only when asked", async () => {
    const reaching = (id: string) => {
      const p = sample.bash(id, "npm install");
      if (p.preview.type === "tool.call") {
        p.preview.runs_in = "workspace";
        p.preview.reaches = ["registry.npmjs.org"];
      }
      return p;
    };
    const p = reaching("p_reach");
    const ipc = showing(p, { status: "approved", decision: { confine: "workspace", hosts: ["registry.npmjs.org"] } });
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const line = await screen.findByTestId("runs-in");
    expect(line.textContent).toContain("reaches only registry.npmjs.org on the network");
    await fireEvent.click(screen.getByTestId("approve"));
    await waitFor(() => expect(ipc.args("decide")).toEqual([{ id: p.id, outcome: "approve", seen: sample.payloadHash(p.id) }]));
    expect((await screen.findByTestId("decision-runs-in")).textContent).toContain("reaching registry.npmjs.org");
    cleanup();
    const q = reaching("p_offline");
    const ipc2 = showing(q, { status: "approved", decision: { confine: "workspace" } });
    render(Detail, { backend: await tauriBackend(), id: q.id });
    await fireEvent.click(await screen.findByTestId("no-network"));
    expect(screen.getByTestId("runs-in").textContent).toContain("reaches no network");
    expect(screen.getByTestId("no-network").textContent).toContain("Let it reach registry.npmjs.org");
    await fireEvent.click(screen.getByTestId("approve"));
    await waitFor(() => expect(ipc2.args("decide")).toEqual([{ id: q.id, outcome: "approve", seen: sample.payloadHash(q.id), hosts: [] }]));
    expect((await screen.findByTestId("decision-runs-in")).textContent).toContain("no network");
  });

  it("shows Assent's diff with the hidden character marked", async () => {
    showing(sample.proposal("fw"));
    render(Detail, { backend: await tauriBackend(), id: sample.WRITE });
    const diff = await screen.findByTestId("diff");
    expect(diff.textContent).toContain("line two");
    expect(diff.querySelector(".mark")?.textContent).toBe("⟦U+200B⟧");
    expect(screen.getByRole("alert").textContent).toContain("ZERO WIDTH SPACE");
  });

  it("marks and counts the hidden characters of the agent's title and summary", async () => {
    const p = sample.proposal("tc", { title: "Update the README \u202Ehs.lru | https://evil.example", summary: "typo\u200B fix" });
    showing(p);
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const title = await screen.findByTestId("agent-title");
    expect(title.textContent).toBe("Update the README ⟦U+202E⟧hs.lru | https://evil.example");
    expect(title.querySelector(".mark")?.textContent).toBe("⟦U+202E⟧");
    expect(title.textContent).not.toContain("\u202E");
    expect(screen.getByTestId("agent-summary").textContent).toBe("typo⟦U+200B⟧ fix");
    const warning = screen.getByTestId("hidden-warning").textContent ?? "";
    expect(warning).toContain("agent's words");
    expect(warning).toContain("U+202E ×1");
    expect(warning).toContain("U+200B ×1");
  });

  it("shows what was approved after an edited approval, the agent's version a tap away", async () => {
    const p = sample.proposal("tc");
    const agent = (p.payload as { input: unknown }).input;
    const editedPayload = { ...(p.payload as object), input: { command: "terraform plan -var env=staging" } };
    const q = sample.decided(p, "applied", { outcome: "approve", edited_payload: editedPayload });
    showing(q);
    render(Detail, { backend: await tauriBackend(), id: q.id });
    const approved = await screen.findByTestId("approved-edited");
    expect(approved.textContent).toContain("as approved, edited by the person");
    expect(screen.getByTestId("approved-edited-text").textContent).toContain("env=staging");
    expect(screen.getByTestId("approved-edit-diff").textContent).toContain("+ ");
    const agentVersion = screen.getByTestId("agent-version") as HTMLDetailsElement;
    expect(agentVersion.open).toBe(false);
    expect(agentVersion.textContent).toContain(JSON.stringify(agent, null, 2).split("\n")[1].trim());
  });

  it("lays out a large file write a page at a time, its size first, the end reachable", async () => {
    const p = sample.proposal("fw");
    const lines = Array.from({ length: 5000 }, (_, i) => ({ tag: "+", old: null, new: i + 1, text: `line ${i + 1}`, flagged: false }));
    Object.assign(p.preview, { exists: false, new_size: 3_800_000, hunks: [{ old_start: 0, old_lines: 0, new_start: 1, new_lines: 5000, lines }], stats: { added: 5000, removed: 0 }, truncated: false, too_large: false, summary: null, invisible_characters: [] });
    showing(p);
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const note = await screen.findByTestId("large-diff");
    expect(note.textContent).toContain("5,000 lines");
    expect(note.textContent).toContain("3.8 MB");
    const diff = screen.getByTestId("diff");
    expect(diff.querySelectorAll(".dl, .srow").length).toBe(2000);
    expect(diff.textContent).toContain("line 2000");
    expect(diff.textContent).not.toContain("line 2001");
    await fireEvent.click(screen.getByTestId("diff-end"));
    await waitFor(() => expect(screen.getByTestId("diff").textContent).toContain("line 5000"), { timeout: 20_000 });
    expect(screen.getByTestId("diff").textContent).not.toContain("line 2000\u00a0");
    expect(screen.getByTestId("diff").querySelectorAll(".dl, .srow").length).toBe(2000);
    await fireEvent.click(screen.getByTestId("diff-all"));
    await waitFor(() => expect(screen.getByTestId("diff").querySelectorAll(".dl, .srow").length).toBe(5000), { timeout: 20_000 });
  }, 30_000); // jsdom lays out 5,000 lines in 2-5 s on two busy cores

  it("says when the middle of a long diff is left out, and shows its end", async () => {
    const p = sample.proposal("fw");
    const line = (n: number) => ({ tag: "+", old: null, new: n, text: `line ${n}`, flagged: false });
    const head = { old_start: 1, old_lines: 0, new_start: 1, new_lines: 3, lines: [1, 2, 3].map(line) };
    const tail = { old_start: 1, old_lines: 0, new_start: 29_999, new_lines: 2, lines: [29_999, 30_000].map(line) };
    Object.assign(p.preview, { exists: false, new_size: 300_000, hunks: [head, tail], stats: { added: 30_000, removed: 0 }, truncated: true, too_large: false, summary: null, invisible_characters: [] });
    showing(p);
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const gap = await screen.findByTestId("diff-gap");
    expect(gap.textContent).toContain("the middle is left out");
    const diff = screen.getByTestId("diff").textContent ?? "";
    expect(diff).toContain("+29999,2");
    expect(diff).toContain("line 30000");
  });

  it("shows the agent's words as text, never as HTML", async () => {
    const p = sample.proposal("tc", { title: '<img src=x onerror="window.pwned=1">', summary: "<b>bold</b>" });
    showing(p);
    const { container } = render(Detail, { backend: await tauriBackend(), id: p.id });
    await screen.findByText('<img src=x onerror="window.pwned=1">');
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector(".awsummary b")).toBeNull();
  });

  it("shows what the client reported and Assent's notes apart from the agent's words", async () => {
    const p = sample.proposal("tc", { title: null, summary: null });
    Object.assign(p.preview, { cwd: "/home/me/project", client: "Codex's permission hook", permission_mode: "default", notes: ["Codex cannot run an edited call."] });
    showing(p);
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const note = await screen.findByTestId("assent-note");
    expect(note.textContent).toBe("Assent: Codex cannot run an edited call.");
    const ctx = screen.getByTestId("tool-context").textContent ?? "";
    expect(ctx).toContain("/home/me/project");
    expect(ctx).toContain("Codex's permission hook");
    // No agent's words: nothing is shown as the agent's.
    expect(screen.queryByLabelText("The agent's own words")).toBeNull();
  });

  it("says a large input's size before its body, lays out only its start, and shows all when asked", async () => {
    const command = `cat <<'EOF'\n${"é".repeat(1_900_000)}\nEOF\nrm -rf ~/end-of-the-input`;
    const p = sample.bash("p_large", command);
    showing(p);
    render(Detail, { backend: await tauriBackend(), id: p.id });
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
    showing(sample.proposal("tc"), { status: "approved" });
    render(Toasts);
    render(Detail, { backend: await tauriBackend(), id: sample.TOOL });
    await fireEvent.click(await screen.findByTestId("approve"));
    await fireEvent.click(await screen.findByText("Approved"));
    expect(screen.queryAllByTestId("toast")).toHaveLength(0);
  });

  it("says who a decision's receipt is for, and that the decision carries one", async () => {
    showing(sample.proposal("tc", { audience: "blog" }), { status: "approved", decision: { receipt: "eyJhbGciOiJFZERTQSJ9.e30.c2ln" } });
    render(Detail, { backend: await tauriBackend(), id: sample.TOOL });
    expect((await screen.findByTestId("detail-audience")).textContent).toBe("receipt for blog");
    expect(screen.queryByTestId("decision-receipt")).toBeNull();
    await fireEvent.click(screen.getByTestId("approve"));
    const receipt = await screen.findByTestId("decision-receipt");
    expect(receipt.textContent).toContain("signed for blog");
  });

  it("rejects with the reason the person typed", async () => {
    const ipc = showing(sample.proposal("tc"), { status: "rejected" });
    render(Detail, { backend: await tauriBackend(), id: sample.TOOL });
    await fireEvent.click(await screen.findByTestId("reject"));
    const confirm = screen.getByTestId("confirm-reject") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("reason"), { target: { value: "not on main" } });
    await fireEvent.click(confirm);
    await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("rejected"));
    expect(ipc.args("decide")).toEqual([{ id: sample.TOOL, outcome: "reject", reason: "not on main", seen: sample.payloadHash(sample.TOOL) }]);
  });

  it("approves an edited tool input", async () => {
    const ipc = showing(sample.proposal("tc"), { status: "approved" });
    render(Detail, { backend: await tauriBackend(), id: sample.TOOL });
    await fireEvent.click(await screen.findByTestId("edit"));
    const editor = document.getElementById("editor") as HTMLTextAreaElement;
    await fireEvent.input(editor, { target: { value: '{"command": "cargo test -q"}' } });
    await fireEvent.click(screen.getByText("Approve edited", { selector: ".form button" }));
    await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("approved"));
    expect(ipc.args("decide")).toEqual([{ id: sample.TOOL, outcome: "approve", edits: { input: { command: "cargo test -q" } }, seen: sample.payloadHash(sample.TOOL) }]);
  });

  it("shows a preview no shape fits as it was stored, and nothing else", async () => {
    const p = sample.proposal("tc", { preview: { type: "unreadable", raw: { type: "tool.call", tool: 7 } } });
    showing(p);
    render(Detail, { backend: await tauriBackend(), id: p.id });
    const block = await screen.findByTestId("unreadable");
    expect(block.textContent).toContain('"tool": 7');
    expect(screen.queryByTestId("diff")).toBeNull();
  });

  describe("approve and allow similar", () => {
    const id = sample.TOOL; // Bash `cargo test`, pending
    const similar = sample.SIMILAR[id];
    beforeEach(() => void toasts.splice(0));

    it.each([
      ["15 min", 900, "for 15 min"],
      ["1 hour", 3600, "for 1 hour"],
      ["1 day", 86400, "for 1 day"],
      ["Until removed", null, "until removed"],
    ] as const)("shows the rule in words and saves it for %s", async (label, secs, words) => {
      const saved = sample.rule("r_similar", "allow", similar.match, similar.description, { note: `allowed like proposal ${id}` });
      const ipc = showing(sample.proposal("tc"), { status: "approved", rule: saved }, { similar_rule: () => similar });
      render(Toasts);
      render(Detail, { backend: await tauriBackend(), id });
      await fireEvent.click(await screen.findByTestId("allow-similar"));
      const panel = await screen.findByTestId("similar");
      expect(ipc.args("similar_rule")).toEqual([{ id }]);
      // The rule is shown in the backend's words, not saved, and the proposal is not decided yet.
      expect(screen.getByTestId("similar-words").textContent?.replace(/\s+/g, " ").trim()).toBe("allow agent default to run cargo test … with tool Bash for 1 hour");
      expect(ipc.args("decide")).toHaveLength(0);
      await fireEvent.click(screen.getAllByTestId("similar-for").find((b) => b.textContent === label) as HTMLElement);
      expect(screen.getByTestId("similar-lasting").textContent).toBe(words);
      expect(panel.textContent).toContain(words);
      await fireEvent.click(screen.getByTestId("confirm-similar"));
      await waitFor(() => expect(screen.getByTestId("status-badge").textContent).toBe("approved"));
      // One decision: approve, with the rule's lifetime, for the payload shown.
      expect(ipc.args("decide")).toEqual([{ id, outcome: "approve", allowSimilar: { expires_in: secs }, seen: sample.payloadHash(id) }]);
      const toast = await screen.findByText(/Rule saved/);
      expect(toast.textContent).toContain("allow agent default to run cargo test … with tool Bash");
      expect(toast.textContent).toContain(words);
    });

    it("saves nothing and decides nothing when cancelled", async () => {
      const ipc = showing(sample.proposal("tc"), null, { similar_rule: () => similar });
      render(Detail, { backend: await tauriBackend(), id });
      await fireEvent.click(await screen.findByTestId("allow-similar"));
      await screen.findByTestId("similar");
      await fireEvent.click(screen.getByTestId("cancel-similar"));
      expect(screen.queryByTestId("similar")).toBeNull();
      expect(ipc.calls.map((c) => c.cmd).filter((c) => c !== "get_proposal")).toEqual(["similar_rule"]);
      expect(screen.getByTestId("status-badge").textContent).toBe("pending");
    });
  });

  describe("a proposal a rule decided", () => {
    /** A Bash call running `command` that the rule `words` decided at once. */
    const byRule = (id: string, command: string, outcome: "approve" | "reject", words: string | null, more: Partial<Decision> = {}) =>
      sample.decided(sample.bash(id, command), outcome === "approve" ? "approved" : "rejected", {
        outcome,
        by: "rule",
        channel: "rule",
        rule: words === null ? null : { id: "r_therule", description: words },
        ...more,
      });

    it("says which rule refused it", async () => {
      const p = byRule("p_pushed", "git push origin main", "reject", "refuse to let any agent run `git push …` with tool `Bash`", { reason: "not from here" });
      showing(p);
      render(Detail, { backend: await tauriBackend(), id: p.id });
      const label = await screen.findByTestId("decided-by-rule");
      expect(label.textContent?.replace(/\s+/g, " ")).toContain("Refused by rule: refuse to let any agent run git push … with tool Bash");
    });

    it("says which rule allowed it", async () => {
      const p = byRule("p_listed", "ls -la", "approve", "allow agent default to run `ls …` with tool `Bash`");
      showing(p);
      render(Detail, { backend: await tauriBackend(), id: p.id });
      const label = await screen.findByTestId("decided-by-rule");
      expect(label.textContent?.replace(/\s+/g, " ")).toContain("Allowed by rule: allow agent default to run ls … with tool Bash");
      expect(screen.queryByTestId("allow-similar")).toBeNull();
    });

    it("says a command a rule allowed ran confined", async () => {
      const p = byRule("p_confined", "ls -la", "approve", "allow any agent to run `ls …` with tool `Bash`", { confine: "read" });
      showing(p);
      render(Detail, { backend: await tauriBackend(), id: p.id });
      const label = await screen.findByTestId("confined");
      expect(label.textContent).toContain("Ran in the read box: it reads this folder only");
    });

    it("says a rule decided it when the rule's words were not kept", async () => {
      const p = byRule(sample.ALLOWED, "npm test", "approve", null);
      showing(p);
      render(Detail, { backend: await tauriBackend(), id: p.id });
      expect((await screen.findByTestId("decided-by-rule")).textContent).toContain("Allowed by a rule.");
    });

    it("shows nothing of the sort on a proposal the person decided", async () => {
      showing(sample.decided(sample.proposal("tc"), "approved", { outcome: "approve" }));
      render(Detail, { backend: await tauriBackend(), id: sample.TOOL });
      await screen.findByTestId("detail");
      expect(screen.queryByTestId("decided-by-rule")).toBeNull();
    });
  });

  describe("the node, on a team store", () => {
    const id = sample.APPLIED; // approved by owner through the CLI, then applied
    const text = (testId: string) => screen.getByTestId(testId).textContent?.replace(/\s+/g, " ").trim();
    const history = () => [...screen.getByTestId("audit").querySelectorAll("li")].map((li) => li.textContent?.replace(/\s+/g, " ") ?? "");

    it("names the node that received it, the one it was decided on, and each change's", async () => {
      const p = sample.proposal("applied", { id, node: "alpha" });
      if (!p.decision) throw new Error("fixture");
      Object.assign(p.decision, { by: "ben", node: "beta" });
      const trail = [
        sample.entry(p, 1, { node: "alpha" }),
        sample.entry(p, 2, { actor: "ben", node: "beta", channel: "app", from: "pending", to: "approved" }),
      ];
      answer({ get_proposal: () => sample.detail(p, trail) });
      render(Detail, { backend: await tauriBackend(), id });
      await screen.findByTestId("detail");
      expect(text("detail-agent")).toBe("agent default on alpha");
      expect(text("decision-by")).toMatch(/^by ben on beta via cli · /);
      const rows = history();
      expect(rows).toHaveLength(2);
      expect(rows[0]).toContain("by default on alpha via agent");
      expect(rows[1]).toContain("by ben on beta via app");
    });

    it("names no node on a single-user store", async () => {
      showing(sample.proposal("applied", { id }));
      render(Detail, { backend: await tauriBackend(), id });
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
