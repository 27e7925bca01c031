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
try {
  await page.goto(url);
  await page.waitForSelector('[data-testid="row"]');
  await page.click('[data-testid="row"][data-id="p_group0"]');
  await page.waitForSelector('[data-testid="diff"]');
  await shot("inbox");
  await page.click('[data-testid="row"][data-id="p_iqgvopaka4n7slxa5lqrbpr4cu"]');
  await page.waitForSelector('[data-testid="diff"] .mark');
  await shot("diff");
  await page.click('[data-testid="row"][data-id="p_3z3evpruoxatree5se4v3guhbm"]');
  await page.waitForSelector('[data-testid="http"]');
  await shot("http");
  await page.click('[data-testid="row"][data-id="p_disguiseddelete00000000000"]');
  await page.waitForSelector('[data-testid="method-override"]');
  await shot("http-override");
  // Approve and allow similar: the rule in words before it is saved.
  await page.click('[data-testid="row"][data-id="p_xw3z55xmqfu3hcl2bg6s3hpfxe"]');
  await page.click('[data-testid="allow-similar"]');
  await page.waitForSelector('[data-testid="similar"]');
  await shot("allow-similar");
  await page.keyboard.press("Escape");
  await page.click('[data-testid="row"][data-id="p_rulerefusedrmbuild00000000"]');
  await page.waitForSelector('[data-testid="decided-by-rule"]');
  await shot("decided-by-rule");
  // A call through Codex's hook: what the client reports, and Assent's own note, apart from
  // the agent's words (it sent none).
  await page.evaluate(() => {
    const m = window.assentPreview;
    const p = structuredClone(m.proposals.find((x) => x.kind === "tool.call"));
    const command = ["bash", "-lc", "git push origin main"];
    Object.assign(p, { id: "p_codexexample0000000000000", title: null, summary: null, status: "pending", settled: false, decision: null, created_at: new Date().toISOString() });
    p.payload = { tool: "shell", input: { command }, cwd: "/home/me/project", client: "codex", permission_mode: "default" };
    p.preview = {
      type: "tool.call", tool: "shell", input: { command }, input_text: JSON.stringify({ command }, null, 2), invisible_characters: [],
      cwd: "/home/me/project", client: "Codex's permission hook", permission_mode: "default",
      notes: ["Codex cannot run an edited call: if you edit this one, Assent tells Codex your edit as a denial with the edited call, and the model may run that, which comes back here to approve."],
    };
    return m.propose(p);
  });
  await page.click('[data-testid="row"][data-id="p_codexexample0000000000000"]');
  await page.waitForSelector('[data-testid="assent-note"]');
  await shot("assent-note");
  // A tool that checks Assent's receipt: whom the signed decision is for, before and after.
  await page.evaluate(() => {
    const m = window.assentPreview;
    const p = structuredClone(m.proposals.find((x) => x.kind === "tool.call"));
    const input = { post_id: 7 };
    Object.assign(p, { id: "p_receiptexample00000000000", title: null, summary: null, status: "pending", settled: false, decision: null, audience: "blog", created_at: new Date().toISOString() });
    p.payload = { tool: "mcp__blog__delete_post", input, cwd: "/home/me/blog", client: "claude-code", permission_mode: "default" };
    p.preview = {
      type: "tool.call", tool: "mcp__blog__delete_post", input, input_text: JSON.stringify(input, null, 2), invisible_characters: [],
      cwd: "/home/me/blog", client: "Claude Code's hook", permission_mode: "default", notes: [],
    };
    return m.propose(p);
  });
  await page.click('[data-testid="row"][data-id="p_receiptexample00000000000"]');
  await page.waitForSelector('[data-testid="detail-audience"]');
  await page.click('[data-testid="approve"]');
  await page.waitForSelector('[data-testid="decision-receipt"]');
  await shot("receipt");
  await page.click('[data-testid="nav-rules"]');
  await page.waitForSelector('[data-testid="rule-row"]');
  await shot("rules");
  // The built-in build-and-test rule, in words before it is turned on.
  await page.click('[data-testid="build-test-ask"]');
  await page.waitForSelector('[data-testid="build-test-words"]');
  await shot("build-test");
  await page.click('[data-testid="add-rule"]');
  await page.selectOption('[data-testid="rule-effect"]', "deny");
  await page.selectOption('[data-testid="rule-kind"]', "http.request");
  await page.selectOption('[data-testid="rule-method"]', "DELETE");
  await page.fill('[data-testid="rule-host"]', "api.github.com");
  await page.fill('[data-testid="rule-note"]', "Nothing gets deleted on GitHub without me.");
  await shot("rules-add");
  await page.click('[data-testid="nav-credentials"]');
  await page.waitForSelector('[data-testid="credential-row"]');
  await shot("credentials");
  await page.click('[data-testid="nav-agents"]');
  await page.waitForSelector('[data-testid="agent-row"]');
  await shot("agents");
  await page.click('[data-testid="nav-settings"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="version"]')?.textContent.includes("commit"));
  await page.waitForFunction(() => !document.querySelector('[data-testid="autostart"]')?.disabled);
  await page.click('[data-testid="autostart"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="autostart"]')?.checked && !document.querySelector('[data-testid="autostart"]').disabled);
  await shot("settings");
  // The tray's Quit while agents wait: the window comes up and asks.
  await page.click('[data-testid="nav-inbox"]');
  await page.waitForSelector('[data-testid="detail"]');
  await page.evaluate(() => window.assentPreview.emit("assent://quit-requested", { waiting: 2, pending: 5 }));
  await page.waitForSelector('[data-testid="quit-dialog"]');
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
