// An in-memory backend with the same semantics as the real one, for tests, layout checks and
// screenshots in a plain browser. Seeded from real API output (fixtures/).

import type { Scheme } from "./bindings/Scheme";
import type { Backend, Change, Detail, ListParams, Outcome } from "./api";
import type { AgentInfo } from "./bindings/AgentInfo";
import type { AuditEntry } from "./bindings/AuditEntry";
import type { CredentialMeta } from "./bindings/CredentialMeta";
import type { Proposal } from "./bindings/Proposal";
import type { ProposalSummary } from "./bindings/ProposalSummary";
import type { Status } from "./bindings/Status";
import fw from "./fixtures/fw.json";
import fd from "./fixtures/fd.json";
import hr from "./fixtures/hr.json";
import tc from "./fixtures/tc.json";
import applied from "./fixtures/fw_applied.json";

const FINAL_APPLIED: Status[] = ["applied", "failed", "rejected", "refined", "expired", "withdrawn"];

export function summary(p: Proposal): ProposalSummary {
  const { id, kind, agent, title, status, settled, session_id, group_id, supersedes, created_at, updated_at, expires_at } = p;
  return { id, kind, agent, title, status, settled, session_id, group_id, supersedes, created_at, updated_at, expires_at };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class MockBackend implements Backend {
  proposals: Proposal[] = [];
  audits = new Map<string, AuditEntry[]>();
  agentList: AgentInfo[] = [{ name: "default", created_at: iso(Date.now() - 86_400_000 * 3), revoked_at: null }];
  creds: CredentialMeta[] = [];
  listeners: ((c: Change) => void)[] = [];
  seq = 0;
  calls: { name: string; args: unknown[] }[] = [];

  constructor(opts: { seed?: number; now?: number } = {}) {
    const now = opts.now ?? Date.now();
    const base = [applied, tc, hr, fd, fw] as unknown as Proposal[];
    base.forEach((p, i) => {
      const created = now - (base.length - i) * 60_000;
      const id = p === (applied as unknown) ? "p_appliedexample000000000000" : p.id;
      this.add({ ...structuredClone(p), id, created_at: iso(created), updated_at: iso(created), expires_at: iso(created + 86_400_000) });
    });
    const group = "release-42";
    ["CHANGELOG.md", "Cargo.toml", "README.md"].forEach((f, i) => {
      const p = structuredClone(fw) as unknown as Proposal;
      p.id = `p_group${i}`;
      p.agent = "release-bot";
      p.title = `Bump the version in ${f}`;
      p.summary = null;
      p.group_id = group;
      (p.payload as Record<string, unknown>).path = `/home/me/project/${f}`;
      (p.preview as Record<string, unknown>).path = `/home/me/project/${f}`;
      p.created_at = p.updated_at = iso(now - 30_000 + i);
      p.expires_at = iso(now + 3_600_000);
      this.add(p);
    });
    // A delete in disguise: a POST that asks the server to act as DELETE, through a header.
    const disguised = structuredClone(hr) as unknown as Proposal;
    disguised.id = "p_disguiseddelete00000000000";
    disguised.title = "Close the issue";
    const pv = disguised.preview as Record<string, unknown>;
    pv.path = "/repos/a/b/issues/7";
    pv.url = "https://api.github.com/repos/a/b/issues/7";
    pv.headers = [
      { name: "accept", value: "application/vnd.github+json" },
      { name: "x-http-method-override", value: "DELETE", changes_meaning: true },
    ];
    pv.header_names = ["accept", "x-http-method-override"];
    pv.effective_method = "DELETE";
    pv.destructive = true;
    disguised.created_at = disguised.updated_at = iso(now - 20_000);
    disguised.expires_at = iso(now + 3_600_000);
    this.add(disguised);
    this.agentList.push({ name: "release-bot", created_at: iso(now - 86_400_000), revoked_at: null });
    this.creds.push({ name: "github", scheme: { type: "bearer" }, origins: ["https://api.github.com:443"], created_at: iso(now - 7200_000) });
    for (let i = 0; i < (opts.seed ?? 0); i++) {
      const p = structuredClone(tc) as unknown as Proposal;
      p.id = `p_seed${i.toString().padStart(6, "0")}`;
      p.title = `Run task ${i}`;
      p.status = i % 7 === 0 ? "pending" : "rejected";
      p.settled = p.status !== "pending";
      p.created_at = p.updated_at = iso(now - 3_600_000 - i * 1000);
      p.expires_at = iso(now + 86_400_000);
      this.add(p);
    }
  }

  private add(p: Proposal) {
    this.proposals.push(p);
    this.audits.set(p.id, [
      { seq: ++this.seq, proposal_id: p.id, actor: p.agent, channel: "agent", from: null, to: "pending", at: p.created_at, detail: { kind: p.kind } } as unknown as AuditEntry,
    ]);
  }

  emit(c: Change) {
    this.listeners.forEach((f) => f(c));
  }

  /** Simulates an agent proposing. */
  propose(p: Proposal) {
    this.add(p);
    this.emit({ type: "proposal.created", proposal: summary(p) });
  }

  async list(q: ListParams) {
    this.calls.push({ name: "list", args: [q] });
    const text = (q.text ?? "").toLowerCase();
    let items = this.proposals.filter(
      (p) =>
        (!q.status || p.status === q.status) &&
        (!q.agent || p.agent === q.agent) &&
        (!q.kind || p.kind === q.kind) &&
        (!q.groupId || p.group_id === q.groupId) &&
        (!text || `${p.title ?? ""} ${p.summary ?? ""} ${JSON.stringify(p.payload)}`.toLowerCase().includes(text)),
    );
    items = items.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id.localeCompare(a.id)));
    const start = q.cursor ? Number(q.cursor) : 0;
    const limit = q.limit ?? 100;
    const page = items.slice(start, start + limit);
    return { items: page, next_cursor: start + limit < items.length ? String(start + limit) : null };
  }

  async get(id: string): Promise<Detail> {
    const p = this.find(id);
    return { proposal: structuredClone(p), audit: structuredClone(this.audits.get(id) ?? []) };
  }

  private find(id: string): Proposal {
    const p = this.proposals.find((x) => x.id === id);
    if (!p) throw { code: "not_found", message: `no proposal \`${id}\`` };
    return p;
  }

  private move(p: Proposal, to: Status, detail: unknown) {
    const from = p.status;
    p.status = to;
    p.updated_at = iso(Date.now());
    p.settled = FINAL_APPLIED.includes(to) || (to === "approved" && p.kind === "tool.call");
    this.audits.get(p.id)?.push({ seq: ++this.seq, proposal_id: p.id, actor: "owner", channel: "app", from, to, at: p.updated_at, detail } as unknown as AuditEntry);
    this.emit({ type: "proposal.updated", proposal: summary(p), from });
  }

  async decide(id: string, outcome: Outcome, o: { reason?: string; feedback?: string; edits?: unknown } = {}) {
    this.calls.push({ name: "decide", args: [id, outcome, o] });
    const p = this.find(id);
    if (p.status !== "pending") throw { code: "invalid_state", message: `proposal ${id} is ${p.status}, not pending` };
    if (outcome === "reject" && !o.reason?.trim()) throw { code: "invalid_field", message: "a rejection needs a reason" };
    const to: Status = outcome === "approve" ? "approved" : outcome === "reject" ? "rejected" : "refined";
    p.decision = { outcome, reason: o.reason ?? null, feedback: o.feedback ?? null, edited_payload: (o.edits as never) ?? null, approved_sha256: null, by: "owner", channel: "app", at: iso(Date.now()) } as never;
    this.move(p, to, { outcome, reason: o.reason ?? null, edited: !!o.edits });
    if (to === "approved" && p.kind !== "tool.call") this.move(p, "applied", null);
    return structuredClone(p);
  }

  async decideBatch(items: { id: string; outcome: Outcome; reason?: string }[]) {
    this.calls.push({ name: "decideBatch", args: [items] });
    const results = [];
    let decided = 0, skipped = 0;
    for (const it of items) {
      const p = this.proposals.find((x) => x.id === it.id);
      if (!p || p.status !== "pending") {
        skipped++;
        results.push({ id: it.id, result: "skipped", status: p?.status ?? null, error: null });
        continue;
      }
      await this.decide(it.id, it.outcome, { reason: it.reason ?? (it.outcome === "reject" ? "rejected together" : undefined) });
      decided++;
      results.push({ id: it.id, result: "decided", status: p.status, error: null });
    }
    return { results, decided, skipped, failed: 0 };
  }

  async decideGroup(groupId: string, agent: string, outcome: Outcome, reason?: string) {
    const ids = this.proposals
      .filter((p) => p.group_id === groupId && p.agent === agent && p.status === "pending")
      .map((p) => ({ id: p.id, outcome, reason }));
    return this.decideBatch(ids);
  }

  async retry(id: string) {
    const p = structuredClone(this.find(id));
    p.id = `${id}_retry`;
    p.status = "pending";
    p.settled = false;
    p.error = null;
    p.decision = null;
    p.created_at = p.updated_at = iso(Date.now());
    this.propose(p);
    return p;
  }

  async agents() {
    return structuredClone(this.agentList);
  }
  async addAgent(name: string) {
    if (this.agentList.some((a) => a.name === name)) throw { code: "conflict", message: `an agent named \`${name}\` already exists` };
    this.agentList.push({ name, created_at: iso(Date.now()), revoked_at: null });
    return `asnt_${"x".repeat(52)}`;
  }
  async revokeAgent(name: string) {
    const a = this.agentList.find((x) => x.name === name);
    if (a) a.revoked_at = iso(Date.now());
  }
  async credentials() {
    return structuredClone(this.creds);
  }
  async addCredential(name: string, scheme: string, hosts: string[], secret: string) {
    this.calls.push({ name: "addCredential", args: [name, scheme, hosts, secret.length] });
    if (!secret) throw { code: "invalid_field", message: "the secret is empty" };
    const parsed: Scheme = scheme.startsWith("header:") ? { type: "header", header: scheme.slice(7) } : scheme === "basic" ? { type: "basic" } : { type: "bearer" };
    const meta = { name, scheme: parsed, origins: hosts.map((h) => (h.includes("://") ? h : `https://${h}:443`)), created_at: iso(Date.now()) };
    this.creds.push(meta);
    return meta;
  }
  async removeCredential(name: string) {
    this.creds = this.creds.filter((c) => c.name !== name);
  }
  async info() {
    return {
      version: "0.1.0",
      home: "/home/me/.local/share/assent",
      api_url: "http://127.0.0.1:4517/v1",
      owner_credential: "keychain",
      notifications: "available",
      kinds: ["file.delete", "file.write", "http.request", "tool.call"],
      limits: { default_expires_in: 86400, max_pending_per_agent: 1000, max_waits_per_agent: 256 },
    };
  }
  firstPage() {
    return null;
  }
  async pendingCount() {
    return this.proposals.filter((p) => p.status === "pending").length;
  }
  async rendered(_firstPageMs: number) {}
  async onChange(f: (c: Change) => void) {
    this.listeners.push(f);
    return () => {
      this.listeners = this.listeners.filter((x) => x !== f);
    };
  }
  async onOpen(_f: (id: string) => void) {
    return () => {};
  }
}
