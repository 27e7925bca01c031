// The inbox's pure logic: ordering, grouping into rows, and keyboard commands.

import type { Proposal } from "./bindings/Proposal";

/** Pending first, then newest first (ties by id, like the store's keyset order). */
export function order(items: Proposal[]): Proposal[] {
  return [...items].sort((a, b) => {
    const pa = a.status === "pending" ? 0 : 1;
    const pb = b.status === "pending" ? 0 : 1;
    if (pa !== pb) return pa - pb;
    if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
    return b.id.localeCompare(a.id);
  });
}

export type Row =
  | { type: "group"; group: string; agent: string; node: string | null; count: number; pending: number }
  | { type: "item"; proposal: Proposal; grouped: boolean; superseded: boolean };

/**
 * The list's rows: proposals of a batch together under one header, in the place of the
 * batch's first member; a proposal that a later one revises is marked superseded. A batch
 * belongs to one agent on one node: the same `group_id` used by two agents, or by agents of
 * the same name on two nodes of a team, is two batches.
 */
export function rows(items: Proposal[]): Row[] {
  const ordered = order(items);
  const revised = new Set(ordered.map((p) => p.supersedes).filter((s): s is string => !!s));
  const key = (p: Proposal) => (p.group_id ? `${p.agent}\u0000${p.node ?? ""}\u0000${p.group_id}` : null);
  const byGroup = new Map<string, Proposal[]>();
  for (const p of ordered) {
    const k = key(p);
    if (k) byGroup.set(k, [...(byGroup.get(k) ?? []), p]);
  }
  const out: Row[] = [];
  const seen = new Set<string>();
  for (const p of ordered) {
    const g = key(p);
    if (g && p.group_id && (byGroup.get(g)?.length ?? 0) > 1) {
      if (seen.has(g)) continue;
      seen.add(g);
      const members = byGroup.get(g) ?? [];
      out.push({
        type: "group",
        group: p.group_id,
        agent: p.agent,
        node: p.node ?? null,
        count: members.length,
        pending: members.filter((m) => m.status === "pending").length,
      });
      for (const m of members) out.push({ type: "item", proposal: m, grouped: true, superseded: revised.has(m.id) });
    } else {
      out.push({ type: "item", proposal: p, grouped: false, superseded: revised.has(p.id) });
    }
  }
  return out;
}

export type Command = "down" | "up" | "approve" | "reject" | "edit" | "refine" | "select" | "search" | "help" | "cancel";

/** The command of a key press, or null (never while typing in a field). */
export function command(e: { key: string; ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean; target?: unknown }): Command | null {
  const t = e.target as { tagName?: string; isContentEditable?: boolean } | null;
  const typing = !!t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || !!t.isContentEditable);
  if (e.key === "Escape") return "cancel";
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return null;
  const map: Record<string, Command> = { j: "down", ArrowDown: "down", k: "up", ArrowUp: "up", a: "approve", r: "reject", e: "edit", f: "refine", x: "select", "/": "search", "?": "help" };
  return map[e.key] ?? null;
}

export const SHORTCUTS: [string, string][] = [
  ["j / k", "next / previous proposal"],
  ["a", "approve"],
  ["r", "reject with a reason"],
  ["e", "edit, then approve the edited version"],
  ["f", "ask the agent for changes (refine)"],
  ["x", "select for a batch decision"],
  ["/", "search"],
  ["Esc", "cancel"],
  ["?", "these shortcuts"],
];
