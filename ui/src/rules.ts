// Rules as the app shows them: in words, with how long they last.

import type { Effect } from "./bindings/Effect";
import type { RuleMatch } from "./bindings/RuleMatch";

/** The fields of a match, in the order the form and the words use them. */
export const MATCH_FIELDS = ["agent", "kind", "tool", "input", "path", "method", "host", "credential"] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

/** The kinds a rule can name. */
export const RULE_KINDS = ["tool.call", "file.write", "file.delete", "http.request"] as const;

/** The kinds each field applies to (the backend refuses a field with another kind). */
export const FIELD_KINDS: Partial<Record<MatchField, readonly string[]>> = {
  tool: ["tool.call"],
  input: ["tool.call"],
  path: ["tool.call", "file.write", "file.delete"],
  method: ["http.request"],
  host: ["http.request"],
  credential: ["http.request"],
};

/** Whether `field` can be part of a rule naming `kind` ("" for any kind). */
export function applies(field: MatchField, kind: string): boolean {
  const ks = FIELD_KINDS[field];
  return !kind || !ks || ks.includes(kind);
}

/** The expiries the app offers, in seconds (null: until removed). */
export const EXPIRIES: { secs: number | null; label: string }[] = [
  { secs: 900, label: "15 min" },
  { secs: 3600, label: "1 hour" },
  { secs: 86400, label: "1 day" },
  { secs: null, label: "Until removed" },
];

/** How long a rule about to be saved lasts, in words ("for 1 hour", "until removed"). */
export function lasting(secs: number | null): string {
  if (secs === null) return "until removed";
  const known = EXPIRIES.find((e) => e.secs === secs);
  if (known) return `for ${known.label}`;
  if (secs % 86400 === 0) return `for ${secs / 86400} d`;
  if (secs % 3600 === 0) return `for ${secs / 3600} h`;
  return `for ${Math.round(secs / 60)} min`;
}

/** When a saved rule stops matching, in words ("expires in 14 min", "expired", "until removed"). */
export function until(expiresAt: string | null | undefined, now: number = Date.now()): string {
  if (!expiresAt) return "until removed";
  const s = Math.ceil((Date.parse(expiresAt) - now) / 1000);
  if (Number.isNaN(s)) return "";
  if (s <= 0) return "expired";
  if (s < 120) return `expires in ${s} s`;
  if (s < 7200) return `expires in ${Math.floor(s / 60)} min`;
  if (s < 172_800) return `expires in ${Math.floor(s / 3600)} h`;
  return `expires in ${Math.floor(s / 86_400)} days`;
}

export function expired(expiresAt: string | null | undefined, now: number = Date.now()): boolean {
  return !!expiresAt && Date.parse(expiresAt) <= now;
}

/** Whether a match names nothing (it matches every proposal of every agent). */
export function isEmpty(m: RuleMatch): boolean {
  return MATCH_FIELDS.every((f) => m[f] == null) && m.builtin == null;
}

/** Whether it is a built-in rule (turned off by removing it). */
export function isBuiltin(m: RuleMatch): boolean {
  return m.builtin != null;
}

/** A description cut where it quotes (`npm test …`), to show the quoted parts as code. */
export function quoted(words: string): { text: string; code: boolean }[] {
  return words
    .split("`")
    .map((text, i) => ({ text, code: i % 2 === 1 }))
    .filter((p) => p.text !== "");
}

const code = (s: string) => `\`${s.replaceAll("`", "'")}\``;

/**
 * A rule in plain words, as Assent says it ("allow agent default to run `npm test …` with tool
 * `Bash`"). The backend's words are the reference: this is for the form's preview of a rule
 * not saved yet (and the browser preview's rules).
 */
export function describe(effect: Effect, m: RuleMatch): string {
  if (m.builtin === "read_only") {
    return "allow commands that only read, inside the working folder, run confined so that they can do nothing more (built in: `ls`, `cat README.md`, `git status`, `grep -rn x src`; the kernel keeps them from writing, reading outside the folder, the network and the environment's secrets)";
  }
  if (m.builtin === "build_test") {
    return "allow builds and tests (built in: `npm test`, `cargo test`, `pytest`, `make`, ...), run confined so that they write only inside the working folder, never its executable configuration (`.git`, `package.json`, a `Makefile`), with no network and no secrets from the environment";
  }
  if (m.input != null && m.exact) return `allow ${m.agent != null ? `agent ${m.agent}` : "any agent"} to run exactly ${code(m.input)}${m.tool != null ? ` with tool ${code(m.tool)}` : ""}`;
  const who = m.agent != null ? `agent ${m.agent}` : "any agent";
  const what: string[] = [];
  if (m.input != null) what.push(`run ${code(`${m.input} …`)}`);
  if (m.tool != null) {
    const glob = /[*?[{]/.test(m.tool);
    what.push(m.input != null ? `with tool ${code(m.tool)}` : glob ? `call tools matching ${code(m.tool)}` : `call tool ${code(m.tool)}`);
  }
  if (m.path != null) {
    const verb =
      m.kind === "file.write" ? "write files matching"
      : m.kind === "file.delete" ? "delete files matching"
      : m.tool != null || m.input != null ? "on files matching"
      : "write or delete files matching";
    what.push(`${verb} ${code(m.path)}`);
  }
  if (m.method != null || m.host != null) {
    const method = m.method != null ? `${m.method.toUpperCase()} ` : "";
    const to = m.host != null ? ` to ${m.host}` : "";
    what.push(`send ${method}requests${to}`);
  }
  if (m.credential != null) what.push(`with credential ${code(m.credential)}`);
  const kindOnly = what.length === 0;
  if (
    m.kind != null &&
    (kindOnly || (m.path == null && m.method == null && m.host == null && m.input == null)) &&
    !(m.kind === "tool.call" && m.tool != null)
  ) {
    what.unshift(`propose ${m.kind}`);
  }
  if (what.length === 0) what.push("do anything");
  const action = what.join(" ");
  if (effect === "allow") return `allow ${who} to ${action}`;
  if (effect === "ask") return `always ask before ${who} may ${action}`;
  return `refuse to let ${who} ${action}`;
}
