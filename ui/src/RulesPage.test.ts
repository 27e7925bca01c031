import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor, within } from "@testing-library/svelte";
import Rules from "./Rules.svelte";
import { MockBackend } from "./mock";

/** A backend with only the rules a test adds. */
function empty(): MockBackend {
  const m = new MockBackend();
  m.ruleList = [];
  return m;
}

const rows = () => screen.queryAllByTestId("rule-row");
const row = (words: string) => {
  const r = rows().find((x) => x.textContent?.includes(words));
  if (!r) throw new Error(`no rule row with ${words}`);
  return r;
};
const calls = (m: MockBackend, name: string) => m.calls.filter((c) => c.name === name);

describe("the Rules page", () => {
  afterEach(cleanup);

  it("offers the build-and-test rule, says what it does, and turns it on only when asked", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await fireEvent.click(await screen.findByTestId("build-test-ask"));
    const words = (screen.getByTestId("build-test-words").textContent ?? "").replace(/\s+/g, " ");
    expect(words).toContain("never its executable configuration");
    expect(words).toContain("no network");
    expect(calls(m, "addRule")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("build-test-on"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(calls(m, "addRule")[0].args[0]).toEqual({ effect: "allow", match: { builtin: "build_test" }, everything: false });
    expect(screen.getByTestId("rule-words").textContent).toContain("allow builds and tests");
    // On: the offer is gone; the rule is turned off like the other built-in one.
    expect(screen.queryByTestId("build-test")).toBeNull();
    expect(within(rows()[0]).getByTestId("rule-builtin")).toBeTruthy();
  });

  it("lists each rule in words, with its note, expiry and counts", async () => {
    const m = empty();
    const allow = await m.addRule({ effect: "allow", match: { agent: "default", kind: "tool.call", tool: "Bash", input: "cargo test" }, everything: false, expires_in: 14 * 60 + 30 });
    await m.addRule({ effect: "deny", match: { tool: "Bash", input: "rm" }, everything: false, expires_in: null, note: "never from a shell" });
    m.ruleList[0].matched = 4;
    render(Rules, { backend: m });
    await waitFor(() => expect(rows()).toHaveLength(2));

    const a = row("cargo test");
    expect(within(a).getByTestId("rule-effect-badge").textContent).toBe("allow");
    expect(within(a).getByTestId("rule-words").textContent?.trim()).toBe("allow agent default to run cargo test … with tool Bash");
    expect(within(a).getByTestId("rule-words").querySelector("code")?.textContent).toBe("cargo test …");
    expect(within(a).getByTestId("rule-expiry-text").textContent).toBe("expires in 14 min");
    expect(within(a).getByTestId("rule-matched").textContent).toBe("matched 4");
    // The pending "cargo test" proposal of the seed data is the one it would have matched.
    const total = m.proposals.length;
    expect(within(a).getByTestId("rule-would").textContent).toBe(`would have matched 1 of the last ${total}`);
    expect(a.dataset.id).toBe(allow.id);

    const d = row("rm …");
    expect(within(d).getByTestId("rule-effect-badge").textContent).toBe("deny");
    expect(within(d).getByTestId("rule-note-text").textContent).toBe("never from a shell");
    expect(within(d).getByTestId("rule-expiry-text").textContent).toBe("until removed");
    expect(within(d).getByTestId("rule-matched").textContent).toBe("matched 0");
    // The seeded `rm -rf build` it refused.
    expect(within(d).getByTestId("rule-would").textContent).toBe(`would have matched 1 of the last ${total}`);
  });

  it("says how many prompts a rule saved this week", async () => {
    const m = empty();
    const r = await m.addRule({ effect: "allow", match: { tool: "Bash", input: "npm test" }, everything: false });
    const decided = (days: number) => {
      const p = structuredClone(m.proposals[0]);
      p.id = `p_saved_${days}`;
      p.created_at = new Date(Date.now() - days * 24 * 3600 * 1000).toISOString();
      p.decision = { ...(p.decision ?? {}), by: "rule", rule: { id: r.id, description: r.description } } as typeof p.decision;
      m.proposals.push(p);
    };
    decided(1);
    decided(3);
    decided(9);
    render(Rules, { backend: m });
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(within(row("npm test")).getByTestId("rule-saved").textContent).toBe("saved 2 prompts this week");
  });

  it("shows a page of rules, then the next on asking", async () => {
    const m = empty();
    m.rulePage = 3;
    for (let i = 0; i < 7; i++) await m.addRule({ effect: "allow", match: { tool: `tool${i}` }, everything: false });
    render(Rules, { backend: m });
    await waitFor(() => expect(rows()).toHaveLength(3));
    expect(screen.getByTestId("rules-shown").textContent).toBe("3 of 7 rules shown");
    await fireEvent.click(screen.getByTestId("more-rules"));
    await waitFor(() => expect(rows()).toHaveLength(6));
    await fireEvent.click(screen.getByTestId("more-rules"));
    await waitFor(() => expect(rows()).toHaveLength(7));
    expect(screen.queryByTestId("more-rules")).toBeNull();
    expect(rows().map((x) => x.textContent?.match(/tool\d/)?.[0])).toEqual(["tool0", "tool1", "tool2", "tool3", "tool4", "tool5", "tool6"]);
    expect(calls(m, "rules").map((c) => c.args[0])).toEqual([null, 3, 6]);
  });

  it("counts an expiring rule down, then shows it expired, dimmed and last", async () => {
    const m = empty();
    await m.addRule({ effect: "allow", match: { tool: "Read" }, everything: false, expires_in: 2 });
    await m.addRule({ effect: "ask", match: { kind: "file.delete" }, everything: false });
    render(Rules, { backend: m });
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(rows()[0].textContent).toContain("call tool Read");
    expect(within(rows()[0]).getByTestId("rule-expiry-text").textContent).toMatch(/^expires in [12] s$/);
    expect(rows()[0].classList.contains("expired")).toBe(false);
    await waitFor(() => expect(within(row("call tool Read")).getByTestId("rule-expiry-text").textContent).toBe("expired"), { timeout: 4000 });
    expect(rows()[1].textContent).toContain("call tool Read");
    expect(rows()[1].classList.contains("expired")).toBe(true);
    expect(rows()[0].classList.contains("expired")).toBe(false);
  });

  it("removes a rule only after the confirmation", async () => {
    const m = new MockBackend();
    render(Rules, { backend: m });
    await waitFor(() => expect(rows().length).toBeGreaterThan(1));
    const before = rows().length;
    const target = row("rm …");
    const id = target.dataset.id;
    await fireEvent.click(within(target).getByTestId("remove-rule"));
    expect(calls(m, "removeRule")).toHaveLength(0);
    // Keep backs out.
    await fireEvent.click(within(target).getByTestId("keep-rule"));
    expect(within(target).queryByTestId("confirm-remove")).toBeNull();
    expect(calls(m, "removeRule")).toHaveLength(0);
    await fireEvent.click(within(target).getByTestId("remove-rule"));
    await fireEvent.click(within(target).getByTestId("confirm-remove"));
    await waitFor(() => expect(rows()).toHaveLength(before - 1));
    expect(calls(m, "removeRule").map((c) => c.args)).toEqual([[id]]);
    expect(rows().some((r) => r.dataset.id === id)).toBe(false);
  });

  it("adds the rule the form describes", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    await fireEvent.change(screen.getByTestId("rule-effect"), { target: { value: "deny" } });
    await fireEvent.change(screen.getByTestId("rule-kind"), { target: { value: "tool.call" } });
    await fireEvent.input(screen.getByTestId("rule-tool"), { target: { value: "Bash" } });
    await fireEvent.input(screen.getByTestId("rule-input"), { target: { value: " git push " } });
    await fireEvent.change(screen.getByTestId("rule-expiry"), { target: { value: "3600" } });
    await fireEvent.input(screen.getByTestId("rule-note"), { target: { value: "push yourself" } });
    // Fields that do not apply to tool.call are not offered.
    expect((screen.getByTestId("rule-host") as HTMLInputElement).disabled).toBe(true);
    expect(screen.getByTestId("rule-preview").textContent).toContain("refuse to let any agent run git push … with tool Bash");
    expect(screen.getByTestId("rule-preview").textContent).toContain("for 1 hour");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(calls(m, "addRule").map((c) => c.args[0])).toEqual([
      { effect: "deny", match: { kind: "tool.call", tool: "Bash", input: "git push" }, everything: false, expires_in: 3600, note: "push yourself" },
    ]);
    expect(rows()[0].textContent).toContain("refuse to let any agent run git push … with tool Bash");
    expect(screen.queryByTestId("rule-form")).toBeNull();
  });

  it("does not keep fields the chosen kind does not have", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    await fireEvent.input(screen.getByTestId("rule-tool"), { target: { value: "Bash" } });
    await fireEvent.input(screen.getByTestId("rule-host"), { target: { value: "api.github.com" } });
    await fireEvent.change(screen.getByTestId("rule-kind"), { target: { value: "http.request" } });
    const tool = screen.getByTestId("rule-tool") as HTMLInputElement;
    expect(tool.disabled).toBe(true);
    expect(tool.value).toBe("");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(calls(m, "addRule")[0].args[0]).toEqual({ effect: "allow", match: { kind: "http.request", host: "api.github.com" }, everything: false, expires_in: null });
  });

  it("asks twice before allowing everything, and only then sends everything: true", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    expect(screen.getByTestId("rule-preview").textContent).toContain("allow any agent to do anything");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    // First confirmation.
    const dialog = await screen.findByTestId("everything-dialog");
    expect(dialog.dataset.step).toBe("1");
    expect(calls(m, "addRule")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("everything-continue"));
    // Second confirmation: typed.
    expect(screen.getByTestId("everything-dialog").dataset.step).toBe("2");
    expect(calls(m, "addRule")).toHaveLength(0);
    const confirm = screen.getByTestId("everything-confirm") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("everything-typed"), { target: { value: "allow" } });
    expect(confirm.disabled).toBe(true);
    await fireEvent.click(confirm);
    expect(calls(m, "addRule")).toHaveLength(0);
    await fireEvent.input(screen.getByTestId("everything-typed"), { target: { value: "allow everything" } });
    expect(confirm.disabled).toBe(false);
    await fireEvent.click(confirm);
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(calls(m, "addRule").map((c) => c.args[0])).toEqual([{ effect: "allow", match: {}, everything: true, expires_in: null }]);
    expect(rows()[0].textContent).toContain("every proposal");
  });

  it("sends nothing when either confirmation is cancelled", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await fireEvent.click(await screen.findByTestId("everything-cancel"));
    expect(screen.queryByTestId("everything-dialog")).toBeNull();
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await fireEvent.click(await screen.findByTestId("everything-continue"));
    await fireEvent.input(screen.getByTestId("everything-typed"), { target: { value: "allow everything" } });
    await fireEvent.click(screen.getByTestId("everything-cancel"));
    expect(screen.queryByTestId("everything-dialog")).toBeNull();
    expect(calls(m, "addRule")).toHaveLength(0);
    expect(m.ruleList).toHaveLength(0);
  });

  it("shows the backend's refusal in the form", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    await fireEvent.change(screen.getByTestId("rule-kind"), { target: { value: "file.write" } });
    await fireEvent.input(screen.getByTestId("rule-path"), { target: { value: "src/**" } });
    await fireEvent.click(screen.getByTestId("rule-submit"));
    const err = await screen.findByTestId("rule-error");
    expect(err.textContent).toBe("`src/**`: a path glob is absolute (starts with `/`) or starts with `**`");
    expect(screen.getByTestId("rule-form")).toBeTruthy();
    expect(rows()).toHaveLength(0);
    // Fixing the field and sending again clears the error.
    await fireEvent.input(screen.getByTestId("rule-path"), { target: { value: "/w/src/**" } });
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(screen.queryByTestId("rule-error")).toBeNull();
  });

  it("shows a rule added elsewhere (the CLI) as it is added", async () => {
    const m = empty();
    render(Rules, { backend: m });
    await screen.findByTestId("no-rules");
    const before = calls(m, "rules").length;
    // What `assent rule add` does: the backend saves the rule and announces it.
    await m.addRule({ effect: "ask", match: { kind: "http.request", method: "delete" }, everything: false });
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(rows()[0].textContent).toContain("always ask before any agent may send DELETE requests");
    expect(calls(m, "rules").length).toBe(before + 1);
  });

  it("names who made a rule, and on which node when there is one", async () => {
    const m = empty();
    await m.addRule({ effect: "allow", match: { tool: "Read" }, everything: false });
    const team = await m.addRule({ effect: "deny", match: { tool: "Bash", input: "rm" }, everything: false });
    const kept = m.ruleList.find((r) => r.id === team.id);
    if (!kept) throw new Error("not saved");
    kept.created_by = "ben";
    kept.node = "alpha";
    render(Rules, { backend: m });
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(within(row("rm …")).getByTestId("rule-added").textContent).toMatch(/ by ben on alpha via /);
    const mine = within(row("call tool Read")).getByTestId("rule-added").textContent ?? "";
    expect(mine).toMatch(/ by owner via /);
    expect(mine).not.toContain(" on ");
  });
});
