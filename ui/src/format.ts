import type { AppInfo, QuitRequest } from "./api";

/** Seconds until `iso`, as a short human phrase ("in 3 h", "expired"). */
export function countdown(iso: string, now: number = Date.now()): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  if (Number.isNaN(s)) return "";
  if (s <= 0) return "expired";
  if (s < 60) return `in ${s} s`;
  if (s < 3600) return `in ${Math.floor(s / 60)} min`;
  if (s < 86400) return `in ${Math.floor(s / 3600)} h`;
  return `in ${Math.floor(s / 86400)} d`;
}

/** How long ago `iso` was, short ("3 min ago"). */
export function ago(iso: string, now: number = Date.now()): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (Number.isNaN(s)) return "";
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

/** " on alpha": the node (Assent server) something happened on, on a team store; nothing otherwise. */
export function onNode(node?: string | null): string {
  return node ? ` on ${node}` : "";
}

/** The version as `assent --version` prints it, without the name: `0.1.0 (commit 3f2a9c1)`. */
export function versionText(info: Pick<AppInfo, "version" | "commit">): string {
  return info.commit ? `${info.version} (commit ${info.commit})` : info.version;
}

/** What the quit confirmation says is waiting, e.g. "2 agents are waiting for a decision
 * (5 proposals pending)." */
export function quitText({ waiting, pending }: QuitRequest): string {
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  const proposals = n(pending, "proposal", "proposals");
  if (waiting > 0) {
    const agents = `${n(waiting, "agent is", "agents are")} waiting for a decision`;
    return pending > 0
      ? `${agents} (${proposals} pending). If you quit, they get no answer until Assent runs again.`
      : `${agents}. If you quit, they get no answer until Assent runs again.`;
  }
  if (pending > 0) return `${proposals} ${pending === 1 ? "is" : "are"} pending. If you quit, ${pending === 1 ? "it stays" : "they stay"} pending until Assent runs again.`;
  return "No agent is waiting for a decision.";
}

/** What a proposal does, in Assent's words (computed from its payload, never the agent's
 * title): for a tool call, the tool and the first line of what it acts on. */
export function what(p: { kind: string; payload: unknown }): string {
  const pl = (p.payload ?? {}) as Record<string, unknown>;
  if (p.kind === "tool.call") {
    const tool = typeof pl.tool === "string" ? pl.tool : "tool";
    const input = (pl.input ?? {}) as Record<string, unknown>;
    const cmd = input.command;
    const shell = (a: unknown[]) =>
      a.length === 3 && ["bash", "sh", "zsh", "dash"].includes(String(a[0]).split("/").pop() ?? "") && ["-c", "-lc", "-ic"].includes(String(a[1]));
    let detail = typeof cmd === "string" ? cmd : Array.isArray(cmd) ? (shell(cmd) ? String(cmd[2]) : cmd.map(String).join(" ")) : "";
    if (!detail) {
      for (const k of ["file_path", "path", "url", "pattern", "notebook_path"]) {
        if (typeof input[k] === "string") {
          detail = input[k] as string;
          break;
        }
      }
    }
    const line = detail.split("\n")[0].slice(0, 120);
    return line ? `${tool}: ${line}` : tool;
  }
  if (p.kind === "file.write" || p.kind === "file.delete") {
    return `${p.kind === "file.write" ? "Write" : "Delete"} ${typeof pl.path === "string" ? pl.path : ""}`.trim();
  }
  if (p.kind === "http.request") return `${pl.method ?? ""} ${pl.url ?? ""}`.trim();
  return p.kind;
}

/** [`what`] in two parts for a list row: where a file's path ends it, everything up to the
 * file's name, and the name, so that a narrow row cuts the folders and never the name. */
export function whatParts(p: { kind: string; payload: unknown }): [string, string] {
  const text = what(p);
  const pl = (p.payload ?? {}) as Record<string, unknown>;
  const input = (pl.input ?? {}) as Record<string, unknown>;
  const path = p.kind === "tool.call" ? (typeof input.command === "string" ? null : ["file_path", "path", "notebook_path"].map((k) => input[k]).find((v) => typeof v === "string")) : pl.path;
  const cut = typeof path === "string" && text.endsWith(path) && !path.includes("\n") ? text.lastIndexOf("/") + 1 : 0;
  return cut > 0 && cut < text.length ? [text.slice(0, cut), text.slice(cut)] : [text, ""];
}

/** What Assent wrote on an audit row in words (why a lease lapsed, ...), if anything. */
export function auditNote(detail: unknown): string | null {
  if (detail && typeof detail === "object" && !Array.isArray(detail)) {
    const m = (detail as Record<string, unknown>).message;
    return typeof m === "string" ? m : null;
  }
  return null;
}

/** A size in bytes, short: "812 B", "14 KB", "3.8 MB" (1 KB = 1,000 bytes, as phones count). */
export function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(bytes < 10_000 ? 1 : 0)} KB`;
  return `${(bytes / 1_000_000).toFixed(bytes < 10_000_000 ? 1 : 0)} MB`;
}

/** A light list row's payload size (the phone's list carries it), when the row says it. */
export function payloadBytes(p: object): number | null {
  const n = (p as { payload_bytes?: unknown }).payload_bytes;
  return typeof n === "number" ? n : null;
}

/** Characters of a long text shown before the person asks for all of it: enough to read, few
 * enough that a phone lays it out at once (a 3.8 MB input took seconds). */
export const SHOWN_CHARS = 64_000;

/** The UTF-8 length of `text`, in bytes. */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** What a box lets a command do, in words (the `read` and `workspace` profiles), with the hosts
 * it reaches through Assent's proxy (none: no network). */
export function boxWords(profile: string, hosts: string[] = []): string {
  const net = hosts.length ? `only ${hosts.join(", ")} on the network` : "no network";
  return profile === "read"
    ? `it reads this folder only (its secret files hidden), writes nothing, and reaches ${net}, no process outside and none of your secrets`
    : `it writes inside this folder only, never its executable configuration (.git, package.json, Makefile, .claude, ...), and reaches ${net}, no process outside and none of your secrets`;
}
