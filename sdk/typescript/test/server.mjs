// A real Assent server for the tests (`assent serve` on a temporary home, the binary in
// ASSENT_BIN), and the person: decisions made through the owner API.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export async function serve() {
  const home = mkdtempSync(join(tmpdir(), "assent-ts-"));
  const env = { ...process.env, ASSENT_OWNER_CREDENTIAL: "file" };
  delete env.ASSENT_URL;
  delete env.ASSENT_TOKEN;
  const proc = spawn(process.env.ASSENT_BIN, ["--home", home, "serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "ignore"] });
  const line = await new Promise((resolve) => createInterface({ input: proc.stdout }).once("line", resolve));
  proc.stdout.resume();
  const url = line.split(/\s+/).find((w) => w.startsWith("http://")).replace(/\/v1$/, "");
  const owner = readFileSync(join(home, "owner.token"), "utf8").trim();
  const call = async (method, path, body) => {
    const res = await fetch(`${url}/v1${path}`, { method, headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" }, body: body && JSON.stringify(body) });
    return res.json();
  };
  const pending = async () => {
    for (let i = 0; i < 400; i++) {
      const { items } = await call("GET", "/proposals?status=pending");
      if (items.length) return items[0];
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("nothing became pending");
  };
  const decideNext = async (decision) => {
    const p = await pending();
    return call("POST", `/proposals/${p.id}/decision`, decision);
  };
  /** Decides proposals as they arrive, each with the next of `decisions`. */
  const decideInTurn = async (decisions) => {
    const done = new Set();
    for (const d of decisions) {
      for (let i = 0; ; i++) {
        if (i > 600) throw new Error("nothing became pending");
        const { items } = await call("GET", "/proposals?status=pending");
        const fresh = items.filter((p) => !done.has(p.id));
        if (fresh.length) {
          const p = fresh[fresh.length - 1];
          done.add(p.id);
          await call("POST", `/proposals/${p.id}/decision`, d);
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  /** Once `n` proposals are pending, lets `afterSecs` pass, then approves them all, oldest
   * first: a person who takes their time over a whole turn. Resolves to the answers. */
  const decideSlowly = async (n, afterSecs) => {
    let items = [];
    for (let i = 0; (items = (await call("GET", "/proposals?status=pending")).items).length < n; i++) {
      if (i > 600) throw new Error("the turn's proposals never all became pending");
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, afterSecs * 1000));
    const answers = [];
    for (const p of items.reverse()) answers.push(await call("POST", `/proposals/${p.id}/decision`, { outcome: "approve" }));
    return answers;
  };
  return { home, url, call, pending, decideNext, decideInTurn, decideSlowly, stop: () => proc.kill() };
}

/** A server for the test `t` alone, stopped when it ends. */
export async function serveFor(t) {
  const s = await serve();
  t.after(() => s.stop());
  return s;
}
