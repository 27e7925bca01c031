// The mock backend's rules: what they match of a proposal, how they rank, and the rule "allow
// similar" saves, with the same semantics as the backend's (crates/core/src/rules).

import type { Effect } from "./bindings/Effect";
import type { Proposal } from "./bindings/Proposal";
import type { Rule } from "./bindings/Rule";
import type { RuleMatch } from "./bindings/RuleMatch";
import { MATCH_FIELDS } from "./rules";

export const MAX_RULE_SECS = 366 * 24 * 3600;

/** What rules can match of a proposal, read from its payload as the backend's kinds read it. */
export interface Facts {
  tool?: string;
  command?: string;
  path?: string;
  method?: string;
  host?: string;
  credential?: string;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

export function facts(p: Proposal): Facts {
  const payload = (p.decision?.edited_payload ?? p.payload ?? {}) as Record<string, unknown>;
  if (p.kind === "tool.call") {
    const input = (payload.input ?? {}) as Record<string, unknown>;
    let command = str(input.command);
    if (Array.isArray(input.command)) {
      const a = input.command.map(String);
      command = a.length === 3 && /^(ba|z)?sh$/.test(a[0]) && /^-\w*c$/.test(a[1]) ? a[2] : a.map(shellQuote).join(" ");
    }
    return { tool: str(payload.tool), command, path: str(input.file_path) ?? str(input.path) ?? str(input.notebook_path), host: hostOf(str(input.url)) };
  }
  if (p.kind === "file.write" || p.kind === "file.delete") return { path: str(payload.path) };
  if (p.kind === "http.request") return { method: str(payload.method)?.toUpperCase(), host: hostOf(str(payload.url)), credential: str(payload.credential) };
  return {};
}

function shellQuote(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'"'"'`)}'`;
}

/** The words of one plain command (no operators, substitutions or redirections), or null. */
function plainWords(cmd: string): string[] | null {
  if (/[;&|`$<>()\n]/.test(cmd)) return null;
  const words = [...cmd.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((x) => x[1] ?? x[2] ?? x[3]);
  if (words.length === 0 || /^\w+=/.test(words[0])) return null;
  return words;
}

/** Each command a line runs (what deny and ask prefixes look at). */
function everyCommand(cmd: string): string[][] {
  return cmd
    .split(/&&|\|\||[;|&\n]|\$\(|`|\)/)
    .map((c) => c.trim().split(/\s+/).filter(Boolean))
    .map((w) => {
      const start = w.findIndex((x) => !/^\w+=/.test(x) && x !== "sudo" && x !== "env");
      return start < 0 ? [] : w.slice(start);
    })
    .filter((w) => w.length > 0);
}

function escapeGlob(s: string): string {
  return s.replace(/[*?[\]{}]/g, (c) => `[${c}]`);
}

/** A glob as the backend reads it: `**` crosses folders, `*` and `?` do not. */
function globRe(g: string): RegExp {
  let re = "";
  for (let i = 0; i < g.length; i++) {
    const c = g[i];
    if (c === "*" && g[i + 1] === "*") {
      i++;
      if (g[i + 1] === "/") {
        i++;
        re += "(?:.*/)?";
      } else re += ".*";
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = g.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let cls = g.slice(i + 1, end);
        if (cls.startsWith("!")) cls = `^${cls.slice(1)}`;
        re += `[${cls.replace(/[\\\]]/g, (x) => `\\${x}`)}]`;
        i = end;
      }
    } else if (c === "{") {
      const end = g.indexOf("}", i);
      if (end < 0) re += "\\{";
      else {
        re += `(?:${g.slice(i + 1, end).split(",").map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Whether a rule's match covers a proposal's facts: every field it names must match. */
export function ruleMatches(effect: Effect, m: RuleMatch, agent: string, kind: string, f: Facts): boolean {
  // The mock does not read commands: a built-in rule decides nothing here.
  if (m.builtin != null) return false;
  if (m.agent != null && m.agent !== agent) return false;
  if (m.kind != null && m.kind !== kind) return false;
  if (m.tool != null && !(f.tool != null && globRe(m.tool).test(f.tool))) return false;
  if (m.input != null) {
    const want = m.input.trim().split(/\s+/);
    const lines = f.command == null ? [] : effect === "allow" ? [plainWords(f.command)] : everyCommand(f.command);
    if (!lines.some((w) => !!w && w.length >= want.length && want.every((x, i) => w[i] === x))) return false;
  }
  if (m.path != null && !(f.path != null && globRe(m.path).test(f.path))) return false;
  if (m.method != null && m.method.toUpperCase() !== f.method) return false;
  if (m.host != null && (m.host.includes("://") ? hostOf(m.host) : m.host.toLowerCase()) !== f.host) return false;
  if (m.credential != null && m.credential !== f.credential) return false;
  return true;
}

/** The narrowest rule allowing what a proposal does again (see the backend's `similar`). */
export function similarMatch(p: Proposal): RuleMatch {
  const f = facts(p);
  const m: RuleMatch = { agent: p.agent, kind: p.kind };
  if (f.tool != null) m.tool = escapeGlob(f.tool);
  const words = f.command != null ? plainWords(f.command) : null;
  if (words) {
    const lead: string[] = [];
    for (const w of words) {
      if (w.startsWith("-") || lead.length === 3) break;
      lead.push(w);
    }
    m.input = (lead.length <= 1 ? words : lead).map(shellQuote).join(" ");
    // A saved rule for commands runs them confined (the backend picks `read` for reads).
    m.confine = "workspace";
  }
  if (f.path != null && f.path.includes("/")) m.path = `${escapeGlob(f.path.slice(0, f.path.lastIndexOf("/")))}/*`;
  if (f.method != null) m.method = f.method;
  if (f.host != null) m.host = f.host;
  if (f.credential != null) m.credential = f.credential;
  return m;
}

const EFFECT_RANK: Record<Effect, number> = { deny: 2, ask: 1, allow: 0 };

/** Orders rules most specific first, as the backend ranks them. */
export function ranking(a: Rule, b: Rule): number {
  const fields = (r: Rule) => MATCH_FIELDS.filter((f) => r.match[f] != null).length;
  const words = (r: Rule) => r.match.input?.trim().split(/\s+/).length ?? 0;
  const literal = (r: Rule) => `${r.match.tool ?? ""}${r.match.path ?? ""}`.replace(/[*?[\]{}]/g, "").length;
  return fields(b) - fields(a) || words(b) - words(a) || literal(b) - literal(a) || EFFECT_RANK[b.effect] - EFFECT_RANK[a.effect] || a.created_at.localeCompare(b.created_at);
}
