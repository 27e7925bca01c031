// An in-memory backend with the same semantics as the real one, for tests, layout checks and
// screenshots in a plain browser. Seeded from real API output (fixtures/).

import type { Scheme } from "./bindings/Scheme";
import type { AppInfo, Backend, Change, DecideOptions, Detail, DeviceInfo, ListParams, Outcome, QuitRequest, RemoteStatus } from "./api";
import type { AgentInfo } from "./bindings/AgentInfo";
import type { AuditEntry } from "./bindings/AuditEntry";
import type { CredentialMeta } from "./bindings/CredentialMeta";
import type { Proposal } from "./bindings/Proposal";
import type { ProposalSummary } from "./bindings/ProposalSummary";
import type { Status } from "./bindings/Status";
import type { Decided } from "./bindings/Decided";
import type { Effect } from "./bindings/Effect";
import type { NewRule } from "./bindings/NewRule";
import type { Rule } from "./bindings/Rule";
import type { RuleList } from "./bindings/RuleList";
import type { RuleMatch } from "./bindings/RuleMatch";
import type { Similar } from "./bindings/Similar";
import type { Channel } from "./bindings/Channel";
import { applies, describe, isEmpty, MATCH_FIELDS, RULE_KINDS } from "./rules";
import { facts, MAX_RULE_SECS, ranking, ruleMatches, similarMatch } from "./mock-rules";
export { facts, ruleMatches, similarMatch, type Facts } from "./mock-rules";
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
  ruleList: Rule[] = [];
  ruleSeq = 0;
  /** Whether Assent would start at login (off until turned on, as in the app). */
  autostartOn = false;
  /** Set it and the next autostart change fails with it (as the system may refuse). */
  autostartError: unknown = null;
  quitListeners: ((q: QuitRequest) => void)[] = [];
  /** How many times the app asked to quit. */
  quits = 0;

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
    this.seedRules(now);
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

  /** A few rules of every sort, and proposals they decided, for the Rules page. */
  private seedRules(now: number) {
    const H = 3_600_000;
    const rule = (effect: Effect, match: RuleMatch, ago: number, o: { channel?: Channel; lasts?: number; note?: string } = {}) =>
      this.saveRule(effect, match, { created: now - ago, expiresAt: o.lasts != null ? now - ago + o.lasts : null, channel: o.channel ?? "app", note: o.note ?? null });
    this.saveRule("allow", { builtin: "read_only" }, { created: now - 30 * 24 * H, expiresAt: null, channel: "system", note: "built in; remove it to turn it off", by: "assent" });
    rule("allow", { agent: "default", kind: "tool.call", tool: "Bash", input: "npm test" }, 72 * H);
    rule("deny", { kind: "tool.call", tool: "Bash", input: "rm" }, 48 * H, { channel: "cli", note: "Never delete from a shell: propose a file.delete, so the inbox shows what goes." });
    rule("allow", { agent: "release-bot", kind: "http.request", method: "GET", host: "api.github.com", credential: "github" }, 26 * H, { lasts: H });
    rule("ask", { kind: "file.write", path: "/home/me/project/.github/**" }, 24 * H, { note: "CI configuration: always a person." });
    rule("allow", { agent: "default", kind: "file.write", path: "/home/me/project/docs/*" }, 16 * 60_000, { lasts: 30 * 60_000 + 30_000, note: "allowed like proposal p_docsreadme0000000000000000" });
    const bash = (id: string, title: string, command: string, at: number) => {
      const p = structuredClone(tc) as unknown as Proposal;
      Object.assign(p, { id, title, summary: null, created_at: iso(at), updated_at: iso(at), expires_at: iso(at + 86_400_000) });
      p.payload = { tool: "Bash", input: { command } };
      p.preview = { type: "tool.call", tool: "Bash", input: { command }, input_text: JSON.stringify({ command }, null, 2), invisible_characters: [], notes: [] };
      this.file(p);
    };
    bash("p_ruleallowednpmtest000000000", "Run the unit tests", "npm test -- --watch=false", now - 2 * H);
    bash("p_rulerefusedrmbuild00000000", "Clean the build folder", "rm -rf build", now - 1.5 * H);
  }

  private saveRule(effect: Effect, match: RuleMatch, o: { created: number; expiresAt: number | null; channel: Channel; note: string | null; everything?: boolean; by?: string }): Rule {
    const rule: Rule = {
      id: `r_${(++this.ruleSeq).toString(36).padStart(4, "0")}mockrule`,
      effect,
      match,
      ...(o.everything ? { everything: true } : {}),
      ...(o.note ? { note: o.note } : {}),
      description: describe(effect, match),
      created_by: o.by ?? "owner",
      created_channel: o.channel,
      created_at: iso(o.created),
      expires_at: o.expiresAt === null ? null : iso(o.expiresAt),
      matched: 0,
    };
    this.ruleList.push(rule);
    return rule;
  }

  /** The rule that decides a proposal now, if any (the most specific one in force). */
  private winner(p: Proposal, now = Date.now()): Rule | null {
    const f = facts(p);
    const live = this.ruleList.filter((r) => (!r.expires_at || Date.parse(r.expires_at) > now) && ruleMatches(r.effect, r.match, p.agent, p.kind, f));
    return live.sort(ranking)[0] ?? null;
  }

  /** Files a proposal as the backend does: the rules are consulted first. */
  private file(p: Proposal) {
    const r = p.status === "pending" ? this.winner(p) : null;
    this.add(p);
    if (!r) return;
    r.matched++;
    if (r.effect === "ask") return;
    const outcome = r.effect === "allow" ? "approve" : "reject";
    const reason = r.effect === "deny" ? (r.note ?? `refused by a rule: ${r.description}`) : null;
    // An allow that confines runs the command confined (the built-in read-only rule: `read`).
    const confine = r.effect === "allow" ? (r.match.builtin === "read_only" ? "read" : r.match.builtin === "build_test" ? "workspace" : r.match.confine) : undefined;
    p.decision = { outcome, reason, by: "rule", rule: { id: r.id, description: r.description }, channel: "rule", at: p.created_at, ...(confine ? { confine } : {}) };
    this.move(p, outcome === "approve" ? "approved" : "rejected", { outcome, reason, rule: r.id, description: r.description }, "rule", false);
    if (p.status === "approved" && p.kind !== "tool.call") this.move(p, "applied", null, "rule", false);
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

  /** Simulates an agent proposing (the rules in force may decide it at once). */
  propose(p: Proposal) {
    this.file(p);
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
    // A stand-in for the payload's hash: one per proposal, as the server's is.
    return { proposal: structuredClone(p), audit: structuredClone(this.audits.get(id) ?? []), payload_sha256: `seen:${id}` };
  }

  private find(id: string): Proposal {
    const p = this.proposals.find((x) => x.id === id);
    if (!p) throw { code: "not_found", message: `no proposal \`${id}\`` };
    return p;
  }

  private move(p: Proposal, to: Status, detail: unknown, by: "owner" | "rule" = "owner", announce = true) {
    const from = p.status;
    p.status = to;
    p.updated_at = by === "rule" ? p.created_at : iso(Date.now());
    p.settled = FINAL_APPLIED.includes(to) || (to === "approved" && p.kind === "tool.call");
    const channel: Channel = by === "rule" ? "rule" : "app";
    this.audits.get(p.id)?.push({ seq: ++this.seq, proposal_id: p.id, actor: by, channel, from, to, at: p.updated_at, detail } as unknown as AuditEntry);
    if (announce) this.emit({ type: "proposal.updated", proposal: summary(p), from });
  }

  async decide(id: string, outcome: Outcome, o: DecideOptions = {}): Promise<Decided> {
    this.calls.push({ name: "decide", args: [id, outcome, o] });
    const p = this.find(id);
    if (o.seen !== undefined && o.seen !== `seen:${id}`) throw { code: "not_what_was_shown", message: `the proposal shown is not \`${id}\`` };
    if (p.status !== "pending") throw { code: "invalid_state", message: `proposal ${id} is ${p.status}, not pending` };
    if (outcome === "reject" && !o.reason?.trim()) throw { code: "invalid_field", message: "a rejection needs a reason" };
    const similar = o.allowSimilar;
    if (similar && outcome !== "approve") throw { code: "invalid_allow_similar", message: "`allow_similar` goes with approve only" };
    if (similar) this.checkExpiry(similar.expires_in, "allow_similar.expires_in");
    const to: Status = outcome === "approve" ? "approved" : outcome === "reject" ? "rejected" : "refined";
    p.decision = { outcome, reason: o.reason ?? null, feedback: o.feedback ?? null, edited_payload: (o.edits as never) ?? null, approved_sha256: null, by: "owner", channel: "app", at: iso(Date.now()), receipt: `eyJhbGciOiJFZERTQSJ9.mock.${p.id}` } as never;
    this.move(p, to, { outcome, reason: o.reason ?? null, edited: !!o.edits });
    if (to === "approved" && p.kind !== "tool.call") this.move(p, "applied", null);
    const rule = similar ? this.insertRule({ effect: "allow", match: similarMatch(p), everything: false, expires_in: similar.expires_in ?? null, note: `allowed like proposal ${p.id}` }) : null;
    return { ...structuredClone(p), rule: rule && structuredClone(rule) };
  }

  async decideBatch(items: { id: string; outcome: Outcome; reason?: string }[]) {
    this.calls.push({ name: "decideBatch", args: [items] });
    const results: { id: string; result: string; status: Status | null; error: null }[] = [];
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
    const decidedAs = (ss: string[]) => results.filter((r) => r.result === "decided" && r.status && ss.includes(r.status)).length;
    const approved = decidedAs(["approved", "applying", "applied", "failed"]);
    return { results, decided, approved, rejected: decidedAs(["rejected"]), refined: decidedAs(["refined"]), skipped, failed: 0 };
  }

  async decideGroup(groupId: string, agent: string, node: string | null, outcome: Outcome, reason?: string) {
    this.calls.push({ name: "decideGroup", args: [groupId, agent, node, outcome] });
    const ids = this.proposals
      .filter((p) => p.group_id === groupId && p.agent === agent && (p.node ?? null) === node && p.status === "pending")
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
  /** Rules a page holds, as the server's default. */
  rulePage = 200;
  async rules(after?: number | null): Promise<RuleList> {
    this.calls.push({ name: "rules", args: [after ?? null] });
    const recent = [...this.proposals].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, 10_000);
    const seen = recent.map((p) => ({ p, f: facts(p) }));
    const weekAgo = iso(Date.now() - 7 * 24 * 3600 * 1000);
    const all = [...this.ruleList].sort((a, b) => a.created_at.localeCompare(b.created_at));
    const from = after ?? 0;
    const page = all.slice(from, from + this.rulePage);
    const items = page.map((r) => ({
      ...structuredClone(r),
      would_have_matched: seen.filter(({ p, f }) => ruleMatches(r.effect, r.match, p.agent, p.kind, f)).length,
      saved_this_week: this.proposals.filter((p) => p.created_at >= weekAgo && p.decision?.by === "rule" && p.decision.rule?.id === r.id).length,
    }));
    const next_after = from + page.length < all.length ? from + page.length : null;
    return { items, recent: recent.length, total: all.length, next_after };
  }

  async addRule(rule: NewRule): Promise<Rule> {
    this.calls.push({ name: "addRule", args: [structuredClone(rule)] });
    return structuredClone(this.insertRule(rule));
  }

  async removeRule(id: string) {
    this.calls.push({ name: "removeRule", args: [id] });
    const i = this.ruleList.findIndex((r) => r.id === id);
    if (i < 0) throw { code: "not_found", message: `no rule \`${id}\`` };
    this.ruleList.splice(i, 1);
    this.emit({ type: "rules.changed", rule_id: id });
  }

  async similarRule(id: string): Promise<Similar> {
    this.calls.push({ name: "similarRule", args: [id] });
    const p = this.find(id);
    if (p.pruned_at) throw { code: "invalid_state", message: `proposal \`${id}\` is past the retention; its content was pruned` };
    const match = similarMatch(p);
    return { match, description: describe("allow", match) };
  }

  private checkExpiry(secs: number | null | undefined, field: string) {
    if (secs != null && !(Number.isInteger(secs) && secs >= 1 && secs <= MAX_RULE_SECS))
      throw { code: "invalid_expiry", message: `\`${field}\` is ${secs}; it is between 1 and ${MAX_RULE_SECS} seconds (leave it out: until removed)` };
  }

  /** Checks a new rule as the backend does, saves it and announces it. */
  private insertRule(req: NewRule): Rule {
    const m: RuleMatch = {};
    for (const f of MATCH_FIELDS) {
      const v = req.match[f];
      if (v == null) continue;
      if (!v.trim()) throw { code: "invalid_match", message: `\`${f}\` is empty, too long or has control characters` };
      m[f] = v;
    }
    if (req.match.builtin != null) {
      if (!["read_only", "build_test"].includes(req.match.builtin) || req.effect !== "allow" || MATCH_FIELDS.some((f) => req.match[f] != null))
        throw { code: "invalid_match", message: `no built-in rule \`${req.match.builtin}\` (there are \`allow\` \`read_only\` and \`allow\` \`build_test\`, alone)` };
      m.builtin = req.match.builtin;
    }
    if (req.match.confine != null) {
      if (req.match.confine !== "read" && req.match.confine !== "workspace") throw { code: "invalid_match", message: `no confinement \`${req.match.confine}\`` };
      if (req.effect !== "allow") throw { code: "invalid_match", message: "`confine` says how an allow runs a command: it goes with `allow` only" };
      m.confine = req.match.confine;
    }
    if (m.kind != null && !(RULE_KINDS as readonly string[]).includes(m.kind)) throw { code: "unknown_kind", message: `unknown kind \`${m.kind}\`` };
    for (const f of MATCH_FIELDS) {
      if (m[f] != null && !applies(f, m.kind ?? "")) throw { code: "invalid_match", message: `\`${f}\` does not apply to kind \`${m.kind}\`; this rule names kind \`${m.kind}\`` };
    }
    if (m.path != null && !(m.path.startsWith("/") || m.path.startsWith("**")))
      throw { code: "invalid_glob", message: `\`${m.path}\`: a path glob is absolute (starts with \`/\`) or starts with \`**\`` };
    if (m.method != null) {
      m.method = m.method.trim().toUpperCase();
      if (!/^[A-Z]{1,20}$/.test(m.method)) throw { code: "invalid_match", message: `\`${req.match.method}\` is not an HTTP method` };
    }
    if (m.host != null && !m.host.includes("://")) {
      m.host = m.host.trim().replace(/\.$/, "").toLowerCase();
      if (!/^[a-z0-9._\-[\]:]{1,253}$/.test(m.host)) throw { code: "invalid_host", message: `\`${req.match.host}\` is not a host name` };
    }
    if (m.credential != null && !this.creds.some((c) => c.name === m.credential)) throw { code: "unknown_credential", message: `no credential \`${m.credential}\`` };
    if (req.everything && !isEmpty(m)) throw { code: "invalid_match", message: "`everything: true` goes with an empty match" };
    if (isEmpty(m) && req.effect === "allow" && !req.everything)
      throw { code: "too_broad", message: 'this rule would allow every proposal of every agent; name what it matches, or say `"everything": true`' };
    this.checkExpiry(req.expires_in, "expires_in");
    const now = Date.now();
    const note = req.note?.trim() ? req.note : null;
    const rule = this.saveRule(req.effect, m, { created: now, expiresAt: req.expires_in != null ? now + req.expires_in * 1000 : null, channel: "app", note, everything: req.everything });
    this.emit({ type: "rules.changed", rule_id: rule.id });
    return rule;
  }

  async info(): Promise<AppInfo> {
    return {
      version: "0.1.0",
      commit: "3f2a9c1",
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
  async autostart() {
    this.calls.push({ name: "autostart", args: [] });
    return this.autostartOn;
  }
  async setAutostart(enabled: boolean) {
    this.calls.push({ name: "setAutostart", args: [enabled] });
    if (this.autostartError !== null) {
      const e = this.autostartError;
      this.autostartError = null;
      throw e;
    }
    this.autostartOn = enabled;
    return this.autostartOn;
  }
  async quit() {
    this.calls.push({ name: "quit", args: [] });
    this.quits++;
  }
  async onQuitRequested(f: (q: QuitRequest) => void) {
    this.quitListeners.push(f);
    return () => {
      this.quitListeners = this.quitListeners.filter((x) => x !== f);
    };
  }
  /** The remote listener, in memory: off until turned on, one device once paired. */
  remoteState: RemoteStatus = { enabled: false, devices: 0, subscribed: 0, push_after: 60 };
  devices: DeviceInfo[] = [];
  async remoteStatus() {
    return { ...this.remoteState, devices: this.devices.filter((d) => !d.revoked_at).length };
  }
  async remoteEnable(origin?: string, pushAfter?: number) {
    this.calls.push({ name: "remoteEnable", args: [origin, pushAfter] });
    const o = origin ?? this.remoteState.origin;
    if (!o || !/^https:\/\/[^/]+$/.test(o.replace(/\/$/, ""))) throw { code: "invalid_origin", message: `the remote origin must be https://HOST[:PORT] with no path: ${o ?? ""}` };
    this.remoteState = { ...this.remoteState, enabled: true, origin: o.replace(/\/$/, ""), address: "127.0.0.1:4518", push_after: pushAfter ?? this.remoteState.push_after };
    return this.remoteStatus();
  }
  async remoteDisable() {
    this.remoteState = { ...this.remoteState, enabled: false, address: undefined };
    return this.remoteStatus();
  }
  async remotePair(name?: string) {
    if (!this.remoteState.enabled) throw { code: "remote_disabled", message: "the remote listener is off: turn it on first" };
    const link = `${this.remoteState.origin}/#pair=${"7f".repeat(32)}${name ? `&name=${encodeURIComponent(name)}` : ""}`;
    // A stand-in pattern of the right size: the real code comes from the host.
    const width = 41;
    let modules = "";
    for (let y = 0; y < width; y++) for (let x = 0; x < width; x++) {
      const finder = (a: number, b: number) => a < 7 && b < 7 && (a === 0 || a === 6 || b === 0 || b === 6 || (a > 1 && a < 5 && b > 1 && b < 5));
      const f = finder(x, y) || finder(width - 1 - x, y) || finder(x, width - 1 - y);
      modules += f || ((x * 7 + y * 13 + x * y) % 5 < 2 && x > 7 && y > 7) ? "1" : "0";
    }
    return { link, expires_at: new Date(Date.now() + 5 * 60_000).toISOString(), qr: { width, modules } };
  }
  async remoteDevices() {
    return this.devices;
  }
  async remoteRevoke(name: string) {
    const d = this.devices.find((x) => x.name === name && !x.revoked_at);
    if (!d) throw { code: "not_found", message: `no paired device \`${name}\`` };
    d.revoked_at = new Date().toISOString();
  }
  /** Simulates the tray's Quit while agents wait (by default: one waiting, every pending proposal). */
  requestQuit(waiting = 1, pending = this.proposals.filter((p) => p.status === "pending").length) {
    this.quitListeners.forEach((f) => f({ waiting, pending }));
  }
}
