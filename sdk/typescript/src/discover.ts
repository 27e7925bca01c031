/** Finding Assent as its command line does: the home's `server.json` and `agent.token`
 * (`ASSENT_HOME`, else the platform's data directory), and the server's proof (`GET /v1/hello`,
 * under the key in `server.json`) before any token is sent. `ASSENT_TOKEN` replaces
 * `agent.token`; `ASSENT_URL` names the server, which must still prove itself: with the key in
 * its home's `server.json`, or `ASSENT_PROOF_KEY`. */

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir, platform } from "node:os";
import { join } from "node:path";
import { failed } from "./answers.js";
import { AssentNotRunning, Impostor, NoProofKey } from "./errors.js";

export interface Where {
  url?: string;
  token?: string;
  home?: string;
}

export interface Endpoint {
  url: string;
  token: string;
  /** The key the server proves itself with (the `proof_key` in its `server.json`). */
  proofKey: Uint8Array;
}

export function homeDir(): string {
  const env = process.env.ASSENT_HOME;
  if (env) return env;
  if (platform() === "darwin") return join(homedir(), "Library", "Application Support", "assent");
  if (platform() === "win32") return join(process.env.APPDATA ?? homedir(), "assent");
  return join(process.env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "assent");
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Where Assent is, the agent token to use and the key the server proves itself with. Throws
 * AssentNotRunning when neither the arguments, the environment nor the home say where it is or
 * give a token, and NoProofKey when nothing gives the key of the server named. */
export function discover(where: Where = {}): Endpoint {
  const home = where.home ?? homeDir();
  let server: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(read(join(home, "server.json")) ?? "{}");
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) server = parsed as Record<string, unknown>;
  } catch {
    server = {};
  }
  const raw = where.url || process.env.ASSENT_URL || (typeof server.url === "string" ? server.url : "");
  if (!raw) throw new AssentNotRunning(`Assent is not running (no server.json in ${home}; start the app or \`assent serve\`)`);
  const url = raw.replace(/\/+$/, "");
  const token = (where.token || process.env.ASSENT_TOKEN?.trim() || read(join(home, "agent.token")) || "").trim();
  if (!token) throw new AssentNotRunning(`no agent token: set ASSENT_TOKEN, or run Assent once in ${home}`);
  return { url, token, proofKey: proofKey(url, home, server) };
}

/** The key the server at `url` proves itself with: `ASSENT_PROOF_KEY`, else the home's
 * `server.json`'s when it is that server's. NoProofKey, saying what is missing, otherwise: a URL
 * alone proves nothing, and no token goes to a server that has proved nothing. */
function proofKey(url: string, home: string, server: Record<string, unknown>): Buffer {
  const missing = (what: string) =>
    new NoProofKey(
      `nothing to prove that ${url} is Assent with: ${what}. Set ASSENT_HOME to that server's home (its server.json ` +
        "holds the key), or ASSENT_PROOF_KEY to the proof_key in that server.json; no token was sent",
    );
  let key = process.env.ASSENT_PROOF_KEY?.trim() ?? "";
  let where = "ASSENT_PROOF_KEY";
  if (!key) {
    if (Object.keys(server).length === 0) throw missing(`no server.json in ${home}`);
    const theirs = typeof server.url === "string" ? server.url.replace(/\/+$/, "") : "";
    if (theirs !== url) throw missing(`the server.json in ${home} is for ${String(server.url)}, not ${url}`);
    key = typeof server.proof_key === "string" ? server.proof_key.trim() : "";
    where = `the server.json in ${home}`;
  }
  if (!/^(?:[0-9a-f]{2})+$/i.test(key)) throw missing(`${where} has no proof_key in hex`);
  return Buffer.from(key, "hex");
}

/** Asks the server to prove it holds the home's key; Impostor unless it does. No answer at all
 * (nothing listens, or the connection ends mid-answer) is AssentNotRunning, the fetch error its
 * cause: nothing to take for an impostor. */
export async function prove(ep: Endpoint): Promise<void> {
  const challenge = randomBytes(24).toString("hex");
  let answer: unknown = null;
  try {
    const res = await fetch(`${ep.url}/v1/hello?challenge=${challenge}`, { signal: AbortSignal.timeout(5000) });
    answer = JSON.parse(await res.text());
  } catch (e) {
    // An answer, but not the JSON of a proof: whatever answered proved nothing.
    const told = failed(ep.url, "GET /v1/hello", e);
    if (told instanceof AssentNotRunning) throw told;
  }
  const proof = (answer as { proof?: unknown } | null)?.proof;
  const refuse = () => new Impostor(`the program at ${ep.url} could not prove it is Assent; no token was sent to it`);
  if (typeof proof !== "string" || !/^[0-9a-f]+$/i.test(proof)) throw refuse();
  const want = createHmac("sha256", ep.proofKey).update(`assent-server-proof\n${challenge}`).digest();
  const got = Buffer.from(proof, "hex");
  if (got.length !== want.length || !timingSafeEqual(got, want)) throw refuse();
}
