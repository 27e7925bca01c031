import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, fireEvent, waitFor, within } from "@testing-library/svelte";
import Rules from "./Rules.svelte";
import { tauriBackend } from "./api";
import { answer, type Handler } from "./ipc-mock";
import * as sample from "./sample";
import type { NewRule } from "./bindings/NewRule";
import type { RuleView } from "./bindings/RuleView";

/** How many recent proposals the backend says it looked at for `would_have_matched`. */
const RECENT = 11;

/**
 * Answers the Rules page with `rules` as they are when asked (a test adds to them or takes
 * from them as the backend would), and `handlers` for the rest.
 */
function rulesOf(rules: RuleView[], handlers: Record<string, Handler> = {}) {
  return answer({
    list_rules: () => ({ items: rules, recent: RECENT, total: rules.length, next_after: null }),
    list_agents: () => sample.agents(),
    list_credentials: () => sample.credentials(),
    ...handlers,
  });
}

/** Saves the rule sent, in the words the backend gives it (`words`), and answers it. */
const saving = (rules: RuleView[], words: string): Handler => ({ rule }) => {
  const r = rule as NewRule;
  const saved = sample.rule(`r_${rules.length}`, r.effect, r.match, words, r.everything ? { everything: true } : {});
  rules.push(saved);
  return saved;
};

/** Opens the form on a page with no rules whose backend saves the rule sent in `words`. */
async function formSaving(words: string) {
  const rules: RuleView[] = [];
  const ipc = rulesOf(rules, { add_rule: saving(rules, words) });
  render(Rules, { backend: await tauriBackend() });
  await fireEvent.click(await screen.findByTestId("add-rule"));
  return ipc;
}

/** Chooses `value` in the select `testId`, or types it into the field `testId`. */
const choose = (testId: string, value: string) => fireEvent.change(screen.getByTestId(testId), { target: { value } });
const typeIn = (testId: string, value: string) => fireEvent.input(screen.getByTestId(testId), { target: { value } });

const inSecs = (secs: number) => new Date(Date.now() + secs * 1000).toISOString();
const rows = () => screen.queryAllByTestId("rule-row");
const row = (words: string) => {
  const r = rows().find((x) => x.textContent?.includes(words));
  if (!r) throw new Error(`no rule row with ${words}`);
  return r;
};

describe("the Rules page", () => {
  afterEach(cleanup);

  /** The Rules page's offer of the built-in rule `builtin` (its test ids start with `id`): its
   * words, which must say `says`, before anything is saved, then the rule saved once asked. */
  async function offered(builtin: "build_test" | "box", id: string, says: string[]) {
    const rules: RuleView[] = [];
    const ipc = rulesOf(rules, { add_rule: saving(rules, sample.BUILTIN_WORDS[builtin]) });
    render(Rules, { backend: await tauriBackend() });
    await fireEvent.click(await screen.findByTestId(`${id}-ask`));
    const words = (screen.getByTestId(`${id}-words`).textContent ?? "").replace(/\s+/g, " ");
    for (const w of says) expect(words).toContain(w);
    expect(ipc.args("add_rule")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId(`${id}-on`));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(ipc.args("add_rule")).toEqual([{ rule: { effect: "allow", match: { builtin }, everything: false } }]);
    expect(screen.queryByTestId(id)).toBeNull();
  }

  it("offers the box rule, says what it does and what still asks, and turns it on only when asked", async () => {
    await offered("box", "box-rule", ["never its executable configuration", "What the box cannot make harmless still asks"]);
  });

  it("offers the build-and-test rule, says what it does, and turns it on only when asked", async () => {
    await offered("build_test", "build-test", ["never its executable configuration", "no network"]);
    expect(screen.getByTestId("rule-words").textContent).toContain("allow builds and tests");
    // On: the offer is gone; the rule is turned off like the other built-in one.
    expect(within(rows()[0]).getByTestId("rule-builtin")).toBeTruthy();
  });


  it("lists each rule in words, with its note, expiry and counts", async () => {
    const allow = sample.rule("r_cargotest", "allow", { agent: "default", kind: "tool.call", tool: "Bash", input: "cargo test" }, "allow agent default to run `cargo test …` with tool `Bash`", {
      expires_at: inSecs(14 * 60 + 30),
      matched: 4,
      would_have_matched: 1,
    });
    const deny = sample.rule("r_rm", "deny", { tool: "Bash", input: "rm" }, "refuse to let any agent run `rm …` with tool `Bash`", { note: "never from a shell", would_have_matched: 1 });
    rulesOf([allow, deny]);
    render(Rules, { backend: await tauriBackend() });
    await waitFor(() => expect(rows()).toHaveLength(2));

    const a = row("cargo test");
    expect(within(a).getByTestId("rule-effect-badge").textContent).toBe("allow");
    expect(within(a).getByTestId("rule-words").textContent?.trim()).toBe("allow agent default to run cargo test … with tool Bash");
    expect(within(a).getByTestId("rule-words").querySelector("code")?.textContent).toBe("cargo test …");
    expect(within(a).getByTestId("rule-expiry-text").textContent).toBe("expires in 14 min");
    expect(within(a).getByTestId("rule-matched").textContent).toBe("matched 4");
    expect(within(a).getByTestId("rule-would").textContent).toBe(`would have matched 1 of the last ${RECENT}`);
    expect(a.dataset.id).toBe(allow.id);

    const d = row("rm …");
    expect(within(d).getByTestId("rule-effect-badge").textContent).toBe("deny");
    expect(within(d).getByTestId("rule-note-text").textContent).toBe("never from a shell");
    expect(within(d).getByTestId("rule-expiry-text").textContent).toBe("until removed");
    expect(within(d).getByTestId("rule-matched").textContent).toBe("matched 0");
    expect(within(d).getByTestId("rule-would").textContent).toBe(`would have matched 1 of the last ${RECENT}`);
  });

  it("says how many prompts a rule saved this week", async () => {
    rulesOf([sample.rule("r_npmtest", "allow", { tool: "Bash", input: "npm test" }, "allow any agent to run `npm test …` with tool `Bash`", { saved_this_week: 2 })]);
    render(Rules, { backend: await tauriBackend() });
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(within(row("npm test")).getByTestId("rule-saved").textContent).toBe("saved 2 prompts this week");
  });

  it("shows a page of rules, then the next on asking", async () => {
    const all = [0, 1, 2, 3, 4, 5, 6].map((i) => sample.rule(`r_tool${i}`, "allow", { tool: `tool${i}` }, `allow any agent to call tool \`tool${i}\``));
    // Pages of three, as a backend with smaller pages would send them.
    const ipc = rulesOf(all, {
      list_rules: ({ after }) => {
        const from = (after as number | null) ?? 0;
        return { items: all.slice(from, from + 3), recent: RECENT, total: all.length, next_after: from + 3 < all.length ? from + 3 : null };
      },
    });
    render(Rules, { backend: await tauriBackend() });
    await waitFor(() => expect(rows()).toHaveLength(3));
    expect(screen.getByTestId("rules-shown").textContent).toBe("3 of 7 rules shown");
    await fireEvent.click(screen.getByTestId("more-rules"));
    await waitFor(() => expect(rows()).toHaveLength(6));
    await fireEvent.click(screen.getByTestId("more-rules"));
    await waitFor(() => expect(rows()).toHaveLength(7));
    expect(screen.queryByTestId("more-rules")).toBeNull();
    expect(rows().map((x) => x.textContent?.match(/tool\d/)?.[0])).toEqual(["tool0", "tool1", "tool2", "tool3", "tool4", "tool5", "tool6"]);
    expect(ipc.args("list_rules")).toEqual([{ after: null }, { after: 3 }, { after: 6 }]);
  });

  it("counts an expiring rule down, then shows it expired, dimmed and last", async () => {
    rulesOf([
      sample.rule("r_read", "allow", { tool: "Read" }, "allow any agent to call tool `Read`", { expires_at: inSecs(2) }),
      sample.rule("r_delete", "ask", { kind: "file.delete" }, "always ask before any agent may propose file.delete"),
    ]);
    render(Rules, { backend: await tauriBackend() });
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
    const rules = sample.rules();
    const ipc = rulesOf(rules, {
      remove_rule: ({ id }) => {
        rules.splice(rules.findIndex((r) => r.id === id), 1);
        return null;
      },
    });
    render(Rules, { backend: await tauriBackend() });
    await waitFor(() => expect(rows().length).toBeGreaterThan(1));
    const before = rows().length;
    const target = row("rm …");
    const id = target.dataset.id;
    await fireEvent.click(within(target).getByTestId("remove-rule"));
    expect(ipc.args("remove_rule")).toHaveLength(0);
    // Keep backs out.
    await fireEvent.click(within(target).getByTestId("keep-rule"));
    expect(within(target).queryByTestId("confirm-remove")).toBeNull();
    expect(ipc.args("remove_rule")).toHaveLength(0);
    await fireEvent.click(within(target).getByTestId("remove-rule"));
    await fireEvent.click(within(target).getByTestId("confirm-remove"));
    await waitFor(() => expect(rows()).toHaveLength(before - 1));
    expect(ipc.args("remove_rule")).toEqual([{ id }]);
    expect(rows().some((r) => r.dataset.id === id)).toBe(false);
  });

  it("adds the rule the form describes", async () => {
    const ipc = await formSaving("refuse to let any agent run `git push …` with tool `Bash`");
    await choose("rule-effect", "deny");
    await choose("rule-kind", "tool.call");
    await typeIn("rule-tool", "Bash");
    await typeIn("rule-input", " git push ");
    await choose("rule-expiry", "3600");
    await typeIn("rule-note", "push yourself");
    // Fields that do not apply to tool.call are not offered.
    expect((screen.getByTestId("rule-host") as HTMLInputElement).disabled).toBe(true);
    expect(screen.getByTestId("rule-preview").textContent).toContain("refuse to let any agent run git push … with tool Bash");
    expect(screen.getByTestId("rule-preview").textContent).toContain("for 1 hour");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(ipc.args("add_rule")).toEqual([
      { rule: { effect: "deny", match: { kind: "tool.call", tool: "Bash", input: "git push" }, everything: false, expires_in: 3600, note: "push yourself" } },
    ]);
    expect(rows()[0].textContent).toContain("refuse to let any agent run git push … with tool Bash");
    expect(screen.queryByTestId("rule-form")).toBeNull();
  });

  it("does not keep fields the chosen kind does not have", async () => {
    const ipc = await formSaving("allow any agent to send requests to api.github.com");
    await typeIn("rule-tool", "Bash");
    await typeIn("rule-host", "api.github.com");
    await choose("rule-kind", "http.request");
    const tool = screen.getByTestId("rule-tool") as HTMLInputElement;
    expect(tool.disabled).toBe(true);
    expect(tool.value).toBe("");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(ipc.args("add_rule")).toEqual([{ rule: { effect: "allow", match: { kind: "http.request", host: "api.github.com" }, everything: false, expires_in: null } }]);
  });

  it("asks twice before allowing everything, and only then sends everything: true", async () => {
    const ipc = await formSaving("allow any agent to do anything");
    expect(screen.getByTestId("rule-preview").textContent).toContain("allow any agent to do anything");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    // First confirmation.
    const dialog = await screen.findByTestId("everything-dialog");
    expect(dialog.dataset.step).toBe("1");
    expect(ipc.args("add_rule")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("everything-continue"));
    // Second confirmation: typed.
    expect(screen.getByTestId("everything-dialog").dataset.step).toBe("2");
    expect(ipc.args("add_rule")).toHaveLength(0);
    const confirm = screen.getByTestId("everything-confirm") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    await typeIn("everything-typed", "allow");
    expect(confirm.disabled).toBe(true);
    await fireEvent.click(confirm);
    expect(ipc.args("add_rule")).toHaveLength(0);
    await typeIn("everything-typed", "allow everything");
    expect(confirm.disabled).toBe(false);
    await fireEvent.click(confirm);
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(ipc.args("add_rule")).toEqual([{ rule: { effect: "allow", match: {}, everything: true, expires_in: null } }]);
    expect(rows()[0].textContent).toContain("every proposal");
  });

  it("sends nothing when either confirmation is cancelled", async () => {
    const ipc = rulesOf([]);
    render(Rules, { backend: await tauriBackend() });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await fireEvent.click(await screen.findByTestId("everything-cancel"));
    expect(screen.queryByTestId("everything-dialog")).toBeNull();
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await fireEvent.click(await screen.findByTestId("everything-continue"));
    await typeIn("everything-typed", "allow everything");
    await fireEvent.click(screen.getByTestId("everything-cancel"));
    expect(screen.queryByTestId("everything-dialog")).toBeNull();
    expect(ipc.args("add_rule")).toHaveLength(0);
  });

  it("shows the backend's refusal in the form", async () => {
    const rules: RuleView[] = [];
    const save = saving(rules, "allow any agent to write files matching `/w/src/**`");
    rulesOf(rules, {
      // The backend refuses a relative glob (its words), and saves the absolute one.
      add_rule: (a) => {
        if ((a.rule as NewRule).match.path === "src/**") throw { code: "invalid_glob", message: "`src/**`: a path glob is absolute (starts with `/`) or starts with `**`" };
        return save(a);
      },
    });
    render(Rules, { backend: await tauriBackend() });
    await fireEvent.click(await screen.findByTestId("add-rule"));
    await choose("rule-kind", "file.write");
    await typeIn("rule-path", "src/**");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    const err = await screen.findByTestId("rule-error");
    expect(err.textContent).toBe("`src/**`: a path glob is absolute (starts with `/`) or starts with `**`");
    expect(screen.getByTestId("rule-form")).toBeTruthy();
    expect(rows()).toHaveLength(0);
    // Fixing the field and sending again clears the error.
    await typeIn("rule-path", "/w/src/**");
    await fireEvent.click(screen.getByTestId("rule-submit"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(screen.queryByTestId("rule-error")).toBeNull();
  });

  it("shows a rule added elsewhere (the CLI) as it is added", async () => {
    const rules: RuleView[] = [];
    const ipc = rulesOf(rules);
    render(Rules, { backend: await tauriBackend() });
    await screen.findByTestId("no-rules");
    const before = ipc.args("list_rules").length;
    // What `assent rule add` does: the backend saves the rule and announces it.
    rules.push(sample.rule("r_fromthecli", "ask", { kind: "http.request", method: "DELETE" }, "always ask before any agent may send DELETE requests", { created_channel: "cli" }));
    await ipc.change({ type: "rules.changed", rule_id: "r_fromthecli" });
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(rows()[0].textContent).toContain("always ask before any agent may send DELETE requests");
    expect(ipc.args("list_rules").length).toBe(before + 1);
  });

  it("names who made a rule, and on which node when there is one", async () => {
    rulesOf([
      sample.rule("r_read", "allow", { tool: "Read" }, "allow any agent to call tool `Read`"),
      sample.rule("r_rm", "deny", { tool: "Bash", input: "rm" }, "refuse to let any agent run `rm …` with tool `Bash`", { created_by: "ben", node: "alpha" }),
    ]);
    render(Rules, { backend: await tauriBackend() });
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(within(row("rm …")).getByTestId("rule-added").textContent).toMatch(/ by ben on alpha via /);
    const mine = within(row("call tool Read")).getByTestId("rule-added").textContent ?? "";
    expect(mine).toMatch(/ by owner via /);
    expect(mine).not.toContain(" on ");
  });
});
