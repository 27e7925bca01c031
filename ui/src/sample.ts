// A sample inbox made of real API output (fixtures/), for the component tests and the browser
// preview. Static data, as the backend would answer it: nothing here matches a rule or decides;
// where an answer depends on the engine (a rule's words, the rule "allow similar" saves), it is
// stated.

import type { AppInfo, Detail } from "./api";
import type { AgentInfo } from "./bindings/AgentInfo";
import type { AuditEntry } from "./bindings/AuditEntry";
import type { CredentialMeta } from "./bindings/CredentialMeta";
import type { Decision } from "./bindings/Decision";
import type { Proposal } from "./bindings/Proposal";
import type { ProposalSummary } from "./bindings/ProposalSummary";
import type { RuleView } from "./bindings/RuleView";
import type { Similar } from "./bindings/Similar";
import type { Status } from "./bindings/Status";
import fw from "./fixtures/fw.json";
import fd from "./fixtures/fd.json";
import hr from "./fixtures/hr.json";
import tc from "./fixtures/tc.json";
import applied from "./fixtures/fw_applied.json";
import appliedAudit from "./fixtures/audit.json";

/** The pending Bash call running `cargo test`. */
export const TOOL = tc.id;
/** The pending file write whose new line holds a zero-width space. */
export const WRITE = fw.id;
/** The pending POST to GitHub, with a credential. */
export const HTTP = hr.id;
/** A file write approved through the command line, then applied. */
export const APPLIED = "p_appliedexample000000000000";
/** A POST that asks the server to act as DELETE, through a header. */
export const DISGUISED = "p_disguiseddelete00000000000";
/** A Bash `rm -rf build` that the sample deny rule refused. */
export const REFUSED = "p_rulerefusedrmbuild00000000";
/** A Bash `npm test` that the sample allow rule approved. */
export const ALLOWED = "p_ruleallowednpmtest000000000";

const FIXTURES = { fw, fd, hr, tc, applied };
const iso = (ms: number) => new Date(ms).toISOString();
const H = 3_600_000;

/** A fresh copy of a fixture, changed by `o`. */
export function proposal(fixture: keyof typeof FIXTURES, o: Partial<Proposal> = {}): Proposal {
  return { ...(structuredClone(FIXTURES[fixture]) as unknown as Proposal), ...o };
}

/** A Bash call running `command`, shaped as the `cargo test` fixture. */
export function bash(id: string, command: string, o: Partial<Proposal> = {}): Proposal {
  const input = { command };
  const preview = { type: "tool.call" as const, tool: "Bash", input, input_text: JSON.stringify(input, null, 2), invisible_characters: [], notes: [] };
  return proposal("tc", { id, title: null, summary: null, payload: { tool: "Bash", input }, preview, ...o });
}

/** Dates for a proposal made at `ms`, which expires a day later. */
function made(ms: number, expiresIn = 24 * H) {
  return { created_at: iso(ms), updated_at: iso(ms), expires_at: iso(ms + expiresIn) };
}

/** `p` as the backend returns it once decided: moved to `status`, with the decision. */
export function decided(p: Proposal, status: Status, decision: Partial<Decision> & Pick<Decision, "outcome">): Proposal {
  const at = decision.at ?? iso(Date.now());
  return { ...p, status, settled: true, updated_at: at, decision: { by: "owner", channel: "app", ...decision, at } };
}

/** The rule-decided ones say which rule, in the backend's words. */
const RULE_WORDS = {
  npmTest: "allow agent default to run `npm test …` with tool `Bash`",
  rm: "refuse to let any agent run `rm …` with tool `Bash`",
};
const RM_NOTE = "Never delete from a shell: propose a file.delete, so the inbox shows what goes.";

/** The sample inbox, newest first: proposals made in the minutes and hours before `now`. */
export function inbox(now = Date.now()): Proposal[] {
  const group = ["CHANGELOG.md", "Cargo.toml", "README.md"].map((f, i) => {
    const p = proposal("fw", { id: `p_group${i}`, agent: "release-bot", title: `Bump the version in ${f}`, summary: null, group_id: "release-42", ...made(now - 30_000 + i, H) });
    (p.payload as Record<string, unknown>).path = `/home/me/project/${f}`;
    (p.preview as Record<string, unknown>).path = `/home/me/project/${f}`;
    return p;
  });
  const disguised = proposal("hr", { id: DISGUISED, title: "Close the issue", ...made(now - 20_000, H) });
  Object.assign(disguised.preview, {
    path: "/repos/a/b/issues/7",
    url: "https://api.github.com/repos/a/b/issues/7",
    headers: [
      { name: "accept", value: "application/vnd.github+json" },
      { name: "x-http-method-override", value: "DELETE", changes_meaning: true },
    ],
    header_names: ["accept", "x-http-method-override"],
    effective_method: "DELETE",
    destructive: true,
  });
  const byRule = (p: Proposal, outcome: "approve" | "reject", id: string, description: string, reason: string | null = null) =>
    decided(p, outcome === "approve" ? "approved" : "rejected", { outcome, reason, by: "rule", channel: "rule", rule: { id, description }, at: p.created_at });
  return [
    disguised,
    ...group.reverse(),
    proposal("fw", made(now - 60_000)),
    proposal("fd", made(now - 120_000)),
    proposal("hr", made(now - 180_000)),
    proposal("tc", made(now - 240_000)),
    proposal("applied", { id: APPLIED, ...made(now - 300_000) }),
    byRule(bash(REFUSED, "rm -rf build", { title: "Clean the build folder", ...made(now - 1.5 * H) }), "reject", "r_rm", RULE_WORDS.rm, RM_NOTE),
    byRule(bash(ALLOWED, "npm test -- --watch=false", { title: "Run the unit tests", ...made(now - 2 * H) }), "approve", "r_npmtest", RULE_WORDS.npmTest),
  ];
}

/** A proposal as an event names it. */
export function summary(p: Proposal): ProposalSummary {
  const { id, kind, agent, node, title, status, settled, session_id, group_id, supersedes, created_at, updated_at, expires_at } = p;
  return { id, kind, agent, ...(node ? { node } : {}), title, status, settled, session_id, group_id, supersedes, created_at, updated_at, expires_at };
}

/** A stand-in for the SHA-256 of a proposal's payload: one per proposal, as the backend's is. */
export const payloadHash = (id: string) => `sha256-of-${id}`;

/** A row of the audit trail (the IPC sends `seq` as a JSON number). */
export function entry(p: Proposal, seq: number, e: Partial<AuditEntry>): AuditEntry {
  return { seq: seq as unknown as bigint, proposal_id: p.id, actor: p.agent, channel: "agent", from: null, to: "pending", at: p.created_at, detail: { kind: p.kind }, ...e };
}

/** A proposal's history: proposed, then decided (the applied example's is the API's own). */
export function audit(p: Proposal): AuditEntry[] {
  if (p.id === APPLIED) return appliedAudit.items.map((a) => ({ ...a, proposal_id: p.id }) as unknown as AuditEntry);
  const d = p.decision;
  const decision = d && entry(p, 2, { actor: d.by, channel: d.channel, from: "pending", to: p.status, at: d.at, detail: { outcome: d.outcome, reason: d.reason ?? null } });
  return [entry(p, 1, {}), ...(decision ? [decision] : [])];
}

/** What `get_proposal` answers for `p`. */
export function detail(p: Proposal, trail = audit(p)): Detail {
  return { proposal: p, audit: trail, payload_sha256: payloadHash(p.id) };
}

/** The rule "approve and allow similar" would save for each pending sample proposal. */
export const SIMILAR: Record<string, Similar> = {
  [TOOL]: {
    match: { agent: "default", kind: "tool.call", tool: "Bash", input: "cargo test", confine: "workspace" },
    description: "allow agent default to run `cargo test …` with tool `Bash`",
  },
  [WRITE]: { match: { agent: "default", kind: "file.write", path: "/tmp/sh/files/*" }, description: "allow agent default to write files matching `/tmp/sh/files/*`" },
  [fd.id]: { match: { agent: "default", kind: "file.delete", path: "/tmp/sh/files/*" }, description: "allow agent default to delete files matching `/tmp/sh/files/*`" },
  ...Object.fromEntries(
    [HTTP, DISGUISED].map((id) => [id, {
      match: { agent: "default", kind: "http.request", method: "POST", host: "api.github.com", credential: "github" },
      description: "allow agent default to send POST requests to api.github.com with credential `github`",
    }]),
  ),
  ...Object.fromEntries(
    [0, 1, 2].map((i) => [`p_group${i}`, {
      match: { agent: "release-bot", kind: "file.write", path: "/home/me/project/*" },
      description: "allow agent release-bot to write files matching `/home/me/project/*`",
    }]),
  ),
};

/** A rule as the Rules page lists it: saved by the owner in the app, matching nothing yet. */
export function rule(id: string, effect: RuleView["effect"], match: RuleView["match"], description: string, o: Partial<RuleView> = {}): RuleView {
  return { id, effect, match, description, created_by: "owner", created_channel: "app", created_at: iso(Date.now()), expires_at: null, matched: 0, would_have_matched: 0, saved_this_week: 0, ...o };
}

/** The words of the built-in rules, as the backend says them. */
export const BUILTIN_WORDS = {
  read_only:
    "allow commands that only read, inside the working folder, run confined so that they can do nothing more (built in: `ls`, `cat README.md`, `git status`, `grep -rn x src`; the kernel keeps them from writing, reading outside the folder, the network and the environment's secrets)",
  build_test:
    "allow builds and tests (built in: `npm test`, `cargo test`, `pytest`, `make`, ...), run confined so that they write only inside the working folder, never its executable configuration (`.git`, `package.json`, a `Makefile`), with no network and no secrets from the environment",
  box: "allow any command that stays in the working folder's box (run in the `workspace` box: it writes inside the folder only, never its executable configuration, with no network but a package registry an install needs, no process outside and no secrets from the environment); deleting, forcing or rewriting (`rm`, `git reset --hard`, `git clean`, a rebase), any other host, publishing and privilege still ask",
};

/** A few rules of every sort, oldest first, with what they matched of the sample inbox. */
export function rules(now = Date.now()): RuleView[] {
  const at = (ago: number) => iso(now - ago);
  return [
    rule("r_readonly", "allow", { builtin: "read_only" }, BUILTIN_WORDS.read_only, { created_at: at(30 * 24 * H), created_by: "assent", created_channel: "system", note: "built in; remove it to turn it off" }),
    rule("r_npmtest", "allow", { agent: "default", kind: "tool.call", tool: "Bash", input: "npm test" }, RULE_WORDS.npmTest, { created_at: at(72 * H), matched: 1, would_have_matched: 1, saved_this_week: 1 }),
    rule("r_rm", "deny", { kind: "tool.call", tool: "Bash", input: "rm" }, RULE_WORDS.rm, { created_at: at(48 * H), created_channel: "cli", note: RM_NOTE, matched: 1, would_have_matched: 1, saved_this_week: 1 }),
    rule("r_releaseget", "allow", { agent: "release-bot", kind: "http.request", method: "GET", host: "api.github.com", credential: "github" },
      "allow agent release-bot to send GET requests to api.github.com with credential `github`", { created_at: at(26 * H), expires_at: at(25 * H) }),
    rule("r_ci", "ask", { kind: "file.write", path: "/home/me/project/.github/**" }, "always ask before any agent may write files matching `/home/me/project/.github/**`",
      { created_at: at(24 * H), note: "CI configuration: always a person." }),
    rule("r_docs", "allow", { agent: "default", kind: "file.write", path: "/home/me/project/docs/*" }, "allow agent default to write files matching `/home/me/project/docs/*`",
      { created_at: at(16 * 60_000), expires_at: at(16 * 60_000 - 30 * 60_000 - 30_000), note: "allowed like proposal p_docsreadme0000000000000000" }),
  ];
}

export const INFO: AppInfo = {
  version: "0.1.0",
  commit: "3f2a9c1",
  home: "/home/me/.local/share/assent",
  api_url: "http://127.0.0.1:4517/v1",
  owner_credential: "keychain",
  notifications: "available",
  kinds: ["file.delete", "file.write", "http.request", "tool.call"],
  limits: { default_expires_in: 86400, max_pending_per_agent: 1000, max_waits_per_agent: 256 },
};

export function agents(now = Date.now()): AgentInfo[] {
  return [
    { name: "default", created_at: iso(now - 3 * 24 * H), revoked_at: null },
    { name: "release-bot", created_at: iso(now - 24 * H), revoked_at: null },
  ];
}

export function credentials(now = Date.now()): CredentialMeta[] {
  return [{ name: "github", scheme: { type: "bearer" }, origins: ["https://api.github.com:443"], created_at: iso(now - 2 * H) }];
}
