// The browser preview (the layout checks, the screenshots): the app with its real Tauri backend,
// whose IPC is answered from the sample inbox (sample.ts). Static answers, no rules: a decision
// only moves the proposal where the person sent it. What the preview does not answer (adding an
// agent, pairing a phone, ...) fails with a message saying so.

import type { Outcome, RemoteStatus } from "./api";
import type { BatchResult } from "./bindings/BatchResult";
import type { Decision } from "./bindings/Decision";
import type { NewRule } from "./bindings/NewRule";
import type { Proposal } from "./bindings/Proposal";
import type { RuleView } from "./bindings/RuleView";
import type { Status } from "./bindings/Status";
import { answer, type Args } from "./ipc-mock";
import { describe } from "./rules";
import * as sample from "./sample";

/** What the scripts driving the preview reach (window.assentPreview). */
export interface Preview {
  proposals: Proposal[];
  /** An agent proposes: the proposal joins the inbox, and the app hears of it. */
  propose(p: Proposal): Promise<void>;
  /** Sends an event as the host does (`assent://quit-requested`, ...). */
  emit(event: string, payload: unknown): Promise<void>;
}

/** Answers the app's IPC from the sample inbox, and `extra` older proposals (a large inbox). */
export function startPreview(extra = 0): Preview {
  const now = Date.now();
  const proposals = sample.inbox(now);
  for (let i = 0; i < extra; i++) {
    const status: Status = i % 7 === 0 ? "pending" : "rejected";
    const at = new Date(now - 3 * 3_600_000 - i * 1000).toISOString();
    proposals.push(sample.bash(`p_seed${String(i).padStart(6, "0")}`, `make task-${i}`, { title: `Run task ${i}`, status, created_at: at, updated_at: at }));
  }
  const rules = sample.rules(now);
  let autostart = false;
  let remote: RemoteStatus = { enabled: false, devices: 0, subscribed: 0, push_after: 60 };

  const find = (id: unknown) => {
    const p = proposals.find((x) => x.id === id);
    if (!p) throw { code: "not_found", message: `no proposal \`${id}\`` };
    return p;
  };

  /** The person decides: the proposal moves, and the app hears of it. */
  async function decide(id: unknown, outcome: Outcome, a: Args = {}): Promise<Proposal> {
    const p = find(id);
    if (p.status !== "pending") throw { code: "invalid_state", message: `proposal ${p.id} is ${p.status}, not pending` };
    const to: Status = outcome === "reject" ? "rejected" : outcome === "refine" ? "refined" : p.kind === "tool.call" ? "approved" : "applied";
    const d = sample.decided(p, to, {
      outcome,
      reason: (a.reason as string) ?? null,
      feedback: (a.feedback as string) ?? null,
      edited_payload: (a.edits as Decision["edited_payload"]) ?? null,
      receipt: `eyJhbGciOiJFZERTQSJ9.preview.${p.id}`,
    });
    proposals[proposals.indexOf(p)] = d;
    await ipc.change({ type: "proposal.updated", proposal: sample.summary(d), from: "pending" });
    return d;
  }

  async function batch(items: { id: string; outcome: Outcome; reason?: string }[]): Promise<BatchResult> {
    const r: BatchResult = { results: [], decided: 0, approved: 0, rejected: 0, refined: 0, skipped: 0, failed: 0 };
    for (const it of items) {
      const p = proposals.find((x) => x.id === it.id);
      if (p?.status !== "pending") {
        r.skipped++;
        r.results.push({ id: it.id, result: "skipped", status: p?.status ?? null, error: null });
        continue;
      }
      const d = await decide(it.id, it.outcome, { reason: it.reason });
      r.decided++;
      if (it.outcome === "approve") r.approved++;
      else if (it.outcome === "reject") r.rejected++;
      else r.refined++;
      r.results.push({ id: it.id, result: "decided", status: d.status, error: null });
    }
    return r;
  }

  const ipc = answer({
    list_proposals: (a) => {
      const shown = proposals.filter(
        (p) => (!a.status || p.status === a.status) && (!a.kind || p.kind === a.kind) && (!a.agent || p.agent === a.agent) && (!a.groupId || p.group_id === a.groupId) && (!a.text || (p.title ?? "").includes(a.text as string)),
      );
      const start = Number(a.cursor ?? 0);
      const end = start + ((a.limit as number) ?? 100);
      return { items: shown.slice(start, end), next_cursor: end < shown.length ? String(end) : null };
    },
    get_proposal: (a) => sample.detail(find(a.id)),
    pending_count: () => proposals.filter((p) => p.status === "pending").length,
    decide: async (a) => {
      const similar = a.allowSimilar ? sample.SIMILAR[a.id as string] : undefined;
      const d = await decide(a.id, a.outcome as Outcome, a);
      const secs = (a.allowSimilar as { expires_in?: number | null } | undefined)?.expires_in;
      const expires_at = secs ? new Date(Date.now() + secs * 1000).toISOString() : null;
      return { ...d, rule: similar ? sample.rule("r_similar", "allow", similar.match, similar.description, { expires_at, note: `allowed like proposal ${d.id}` }) : null };
    },
    decide_batch: (a) => batch(a.items as { id: string; outcome: Outcome; reason?: string }[]),
    decide_group: (a) => {
      const group = proposals.filter((p) => p.group_id === a.groupId && p.agent === a.agent && p.status === "pending");
      return batch(group.map((p) => ({ id: p.id, outcome: a.outcome as Outcome, reason: a.reason as string | undefined })));
    },
    similar_rule: (a) => {
      if (!sample.SIMILAR[a.id as string]) throw { code: "unavailable", message: "the preview knows no similar rule for this proposal" };
      return sample.SIMILAR[a.id as string];
    },
    list_rules: () => ({ items: rules, recent: proposals.length, total: rules.length, next_after: null }),
    add_rule: async (a) => {
      const r = a.rule as NewRule;
      const secs = r.expires_in;
      const saved: RuleView = sample.rule(`r_preview${rules.length}`, r.effect, r.match, describe(r.effect, r.match), {
        note: r.note ?? null,
        expires_at: secs ? new Date(Date.now() + secs * 1000).toISOString() : null,
        ...(r.everything ? { everything: true } : {}),
      });
      rules.push(saved);
      await ipc.change({ type: "rules.changed", rule_id: saved.id });
      return saved;
    },
    remove_rule: async (a) => {
      rules.splice(rules.findIndex((r) => r.id === a.id), 1);
      await ipc.change({ type: "rules.changed", rule_id: a.id as string });
      return null;
    },
    list_agents: () => sample.agents(now),
    list_credentials: () => sample.credentials(now),
    app_info: () => sample.INFO,
    ui_ready: () => null,
    get_autostart: () => autostart,
    set_autostart: (a) => (autostart = a.enabled as boolean),
    quit_app: () => null,
    remote_status: () => remote,
    remote_devices: () => [],
    remote_enable: (a) =>
      (remote = { ...remote, enabled: true, origin: (a.origin as string) ?? remote.origin, address: "127.0.0.1:4518", push_after: (a.pushAfter as number) ?? remote.push_after }),
    remote_disable: () => (remote = { ...remote, enabled: false, address: undefined }),
  });

  return {
    proposals,
    async propose(p) {
      proposals.unshift(p);
      await ipc.change({ type: "proposal.created", proposal: sample.summary(p) });
    },
    emit: ipc.emit,
  };
}
