// Screenshots of the UI (mock backend) in headless Chromium, into docs/.
import { chromium } from "playwright-core";
import { serve, CHROMIUM_ARGS } from "./serve.mjs";
import { fileURLToPath } from "node:url";

const out = fileURLToPath(new URL("../../docs/", import.meta.url));
const { server, url } = await serve();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
const problems = [];
page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
page.on("pageerror", (e) => problems.push(String(e)));
try {
  await page.goto(url);
  await page.waitForSelector('[data-testid="row"]');
  await page.click('[data-testid="row"][data-id="p_group0"]');
  await page.waitForSelector('[data-testid="diff"]');
  await page.screenshot({ path: `${out}inbox.png` });
  await page.click('[data-testid="row"][data-id="p_iqgvopaka4n7slxa5lqrbpr4cu"]');
  await page.waitForSelector('[data-testid="diff"] .mark');
  await page.screenshot({ path: `${out}diff.png` });
  await page.click('[data-testid="row"][data-id="p_3z3evpruoxatree5se4v3guhbm"]');
  await page.waitForSelector('[data-testid="http"]');
  await page.screenshot({ path: `${out}http.png` });
  await page.click('[data-testid="row"][data-id="p_disguiseddelete00000000000"]');
  await page.waitForSelector('[data-testid="method-override"]');
  await page.screenshot({ path: `${out}http-override.png` });
  // Approve and allow similar: the rule in words before it is saved.
  await page.click('[data-testid="row"][data-id="p_xw3z55xmqfu3hcl2bg6s3hpfxe"]');
  await page.click('[data-testid="allow-similar"]');
  await page.waitForSelector('[data-testid="similar"]');
  await page.screenshot({ path: `${out}allow-similar.png` });
  await page.keyboard.press("Escape");
  await page.click('[data-testid="row"][data-id="p_rulerefusedrmbuild00000000"]');
  await page.waitForSelector('[data-testid="decided-by-rule"]');
  await page.screenshot({ path: `${out}decided-by-rule.png` });
  await page.click('[data-testid="nav-rules"]');
  await page.waitForSelector('[data-testid="rule-row"]');
  await page.screenshot({ path: `${out}rules.png` });
  await page.click('[data-testid="add-rule"]');
  await page.selectOption('[data-testid="rule-effect"]', "deny");
  await page.selectOption('[data-testid="rule-kind"]', "http.request");
  await page.selectOption('[data-testid="rule-method"]', "DELETE");
  await page.fill('[data-testid="rule-host"]', "api.github.com");
  await page.fill('[data-testid="rule-note"]', "Nothing gets deleted on GitHub without me.");
  await page.screenshot({ path: `${out}rules-add.png` });
  await page.click('[data-testid="nav-credentials"]');
  await page.waitForSelector('[data-testid="credential-row"]');
  await page.screenshot({ path: `${out}credentials.png` });
  await page.click('[data-testid="nav-agents"]');
  await page.waitForSelector('[data-testid="agent-row"]');
  await page.screenshot({ path: `${out}agents.png` });
} finally {
  await browser.close();
  server.close();
}
if (problems.length) {
  console.error("console errors:\n" + problems.join("\n"));
  process.exit(1);
}
console.log("screenshots saved in docs/");
