// Screenshots of the UI in headless Chromium (the browser preview: the sample inbox answers the
// IPC), into docs/, or into SHOTS_DIR when it is set.
// `npm run shots` takes them all; `npm run shots -- settings quit` only those named.
import { chromium } from "playwright-core";
import { serve, CHROMIUM_ARGS } from "./serve.mjs";
import { fileURLToPath } from "node:url";

const out = process.env.SHOTS_DIR ? `${process.env.SHOTS_DIR.replace(/\/$/, "")}/` : fileURLToPath(new URL("../../docs/", import.meta.url));
const only = process.argv.slice(2);
const { server, url } = await serve();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
const problems = [];
const shot = (name) => (only.length === 0 || only.includes(name) ? page.screenshot({ path: `${out}${name}.png` }) : undefined);
page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
page.on("pageerror", (e) => problems.push(String(e)));
/** Clicks `click`, waits for `ready` (a selector, or a function true once the page is ready), then takes `name`. */
async function clickAndShoot(click, ready, name) {
  await page.click(click);
  await (typeof ready === "function" ? page.waitForFunction(ready) : page.waitForSelector(ready));
  await shot(name);
}
const row = (id) => `[data-testid="row"][data-id="${id}"]`;
const tid = (id) => `[data-testid="${id}"]`;
/** Adds to the inbox a pending tool call made from the sample's first one: `tool` with `input`
 * in `cwd`, from `client` (`hook` is how the preview names it), with Assent's `notes`. */
const proposeToolCall = (fields) =>
  page.evaluate(({ id, audience, tool, input, cwd, client, hook, notes, runs_in, reaches }) => {
    const m = window.assentPreview;
    const p = structuredClone(m.proposals.find((x) => x.kind === "tool.call"));
    Object.assign(p, { id, title: null, summary: null, status: "pending", settled: false, decision: null, ...(audience ? { audience } : {}), created_at: new Date().toISOString() });
    p.payload = { tool, input, cwd, client, permission_mode: "default", ...(runs_in ? { confinable: true } : {}) };
    p.preview = {
      type: "tool.call", tool, input, input_text: JSON.stringify(input, null, 2), invisible_characters: [],
      cwd, client: hook, permission_mode: "default", notes, ...(runs_in ? { runs_in } : {}), ...(reaches ? { reaches } : {}),
    };
    return m.propose(p);
  }, fields);

try {
  await page.goto(url);
  await page.waitForSelector(tid("row"));
  // Each proposal of the sample inbox, once its detail shows what it is about.
  for (const [id, ready, name] of [
    ["p_group0", tid("diff"), "inbox"],
    ["p_iqgvopaka4n7slxa5lqrbpr4cu", `${tid("diff")} .mark`, "diff"],
    ["p_3z3evpruoxatree5se4v3guhbm", tid("http"), "http"],
    ["p_disguiseddelete00000000000", tid("method-override"), "http-override"],
  ]) await clickAndShoot(row(id), ready, name);
  // Approve and allow similar: the rule in words before it is saved.
  await page.click(row("p_xw3z55xmqfu3hcl2bg6s3hpfxe"));
  await clickAndShoot(tid("allow-similar"), tid("similar"), "allow-similar");
  await page.keyboard.press("Escape");
  await clickAndShoot(row("p_rulerefusedrmbuild00000000"), tid("decided-by-rule"), "decided-by-rule");
  // A call through Codex's hook: what the client reports, and Assent's own note, apart from
  // the agent's words (it sent none).
  await proposeToolCall({
    id: "p_codexexample0000000000000", tool: "shell", input: { command: ["bash", "-lc", "git push origin main"] }, cwd: "/home/me/project",
    client: "codex", hook: "Codex's permission hook",
    notes: ["Codex cannot run an edited call: if you edit this one, Assent tells Codex your edit as a denial with the edited call, and the model may run that, which comes back here to approve."],
  });
  await clickAndShoot(row("p_codexexample0000000000000"), tid("assent-note"), "assent-note");
  // A command the client runs through Assent: the box an approval runs it in, said before the
  // decision, and unconfined as a separate, marked choice.
  await proposeToolCall({
    id: "p_boxedtestrun0000000000000", tool: "Bash", input: { command: "npm test", description: "Run the test suite" },
    cwd: "/home/me/project", client: "claude-code", hook: "Claude Code's hook", notes: [], runs_in: "workspace",
  });
  await clickAndShoot(row("p_boxedtestrun0000000000000"), tid("runs-in"), "boxed-approval");
  await clickAndShoot(tid("run-unconfined"), ".boxline.unboxed", "unboxed-approval");
  // A package install: the box reaches the registry Assent's reader names, and only it.
  await proposeToolCall({
    id: "p_boxedinstall000000000000", tool: "Bash", input: { command: "npm install", description: "Install dependencies" },
    cwd: "/home/me/project", client: "claude-code", hook: "Claude Code's hook", notes: [], runs_in: "workspace",
    reaches: ["registry.npmjs.org"],
  });
  await clickAndShoot(row("p_boxedinstall000000000000"), tid("no-network"), "network-by-name");
  // A tool that checks Assent's receipt: whom the signed decision is for, before and after.
  await proposeToolCall({
    id: "p_receiptexample00000000000", audience: "blog", tool: "mcp__blog__delete_post", input: { post_id: 7 }, cwd: "/home/me/blog",
    client: "claude-code", hook: "Claude Code's hook", notes: [],
  });
  await page.click(row("p_receiptexample00000000000"));
  await page.waitForSelector(tid("detail-audience"));
  await clickAndShoot(tid("approve"), tid("decision-receipt"), "receipt");
  await clickAndShoot(tid("nav-rules"), tid("rule-row"), "rules");
  // The built-in build-and-test rule, in words before it is turned on.
  await clickAndShoot(tid("build-test-ask"), tid("build-test-words"), "build-test");
  // The built-in box rule, in words before it is turned on.
  await clickAndShoot(tid("box-rule-ask"), tid("box-rule-words"), "box-rule");
  await page.click(tid("add-rule"));
  await page.selectOption(tid("rule-effect"), "deny");
  await page.selectOption(tid("rule-kind"), "http.request");
  await page.selectOption(tid("rule-method"), "DELETE");
  await page.fill(tid("rule-host"), "api.github.com");
  await page.fill(tid("rule-note"), "Nothing gets deleted on GitHub without me.");
  await shot("rules-add");
  await clickAndShoot(tid("nav-credentials"), tid("credential-row"), "credentials");
  await clickAndShoot(tid("nav-agents"), tid("agent-row"), "agents");
  await page.click(tid("nav-settings"));
  await page.waitForFunction(() => document.querySelector('[data-testid="version"]')?.textContent.includes("commit"));
  await page.waitForFunction(() => !document.querySelector('[data-testid="autostart"]')?.disabled);
  await clickAndShoot(tid("autostart"), () => document.querySelector('[data-testid="autostart"]')?.checked && !document.querySelector('[data-testid="autostart"]').disabled, "settings");
  // The tray's Quit while agents wait: the window comes up and asks.
  await page.click(tid("nav-inbox"));
  await page.waitForSelector(tid("detail"));
  await page.evaluate(() => window.assentPreview.emit("assent://quit-requested", { waiting: 2, pending: 5 }));
  await page.waitForSelector(tid("quit-dialog"));
  await shot("quit");
  await page.keyboard.press("Escape");
} finally {
  await browser.close();
  server.close();
}
if (problems.length) {
  console.error("console errors:\n" + problems.join("\n"));
  process.exit(1);
}
console.log(`screenshots saved in ${out}`);
