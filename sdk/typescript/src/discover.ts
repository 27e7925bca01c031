/** Finding Assent as its command line does: `ASSENT_URL` and `ASSENT_TOKEN`, else the home's
 * `server.json` and `agent.token` (`ASSENT_HOME`, else the platform's data directory), and the
 * server's proof (`GET /v1/hello`) before any token is sent. */

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir, platform } from "node:os";
import { join } from "node:path";
import { AssentNotRunning, Impostor } from "./errors.js";

export interface Where {
  url?: string;
  token?: string;
  home?: string;
}

export interface Endpoint {
  url: string;
  token: string;
  proofKey: Buffer | null;
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

export function discover(where: Where = {}): Endpoint {
  const home = where.home ?? homeDir();
  let server: { url?: string; proof_key?: string } = {};
  try {
    server = JSON.parse(read(join(home, "server.json")) ?? "{}");
  } catch {
    server = {};
  }
  const raw = where.url ?? process.env.ASSENT_URL ?? server.url;
  if (!raw) throw new AssentNotRunning(`Assent is not running (no server.json in ${home}; start the app or \`assent serve\`)`);
  const url = raw.replace(/\/+$/, "");
  const token = (where.token ?? process.env.ASSENT_TOKEN ?? read(join(home, "agent.token")) ?? "").trim();
  if (!token) throw new AssentNotRunning(`no agent token: set ASSENT_TOKEN, or run Assent once in ${home}`);
  const key = process.env.ASSENT_PROOF_KEY ?? (server.url?.replace(/\/+$/, "") === url ? server.proof_key : undefined);
  return { url, token, proofKey: key ? Buffer.from(key, "hex") : null };
}

/** Asks the server to prove it holds the home's key; Impostor unless it does. */
export async function prove(ep: Endpoint): Promise<void> {
  const challenge = randomBytes(24).toString("hex");
  let answer: unknown;
  try {
    const res = await fetch(`${ep.url}/v1/hello?challenge=${challenge}`, { signal: AbortSignal.timeout(5000) });
    answer = await res.json().catch(() => null);
  } catch (e) {
    throw new AssentNotRunning(`Assent is not running at ${ep.url} (${(e as Error).message})`);
  }
  const proof = (answer as { proof?: unknown } | null)?.proof;
  const refuse = () => new Impostor(`the program at ${ep.url} could not prove it is Assent; no token was sent to it`);
  if (!ep.proofKey || typeof proof !== "string" || !/^[0-9a-f]+$/i.test(proof)) throw refuse();
  const want = createHmac("sha256", ep.proofKey).update(`assent-server-proof\n${challenge}`).digest();
  const got = Buffer.from(proof, "hex");
  if (got.length !== want.length || !timingSafeEqual(got, want)) throw refuse();
}
