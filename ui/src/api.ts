// The app's only door to Assent: Tauri commands (IPC). In a plain browser (tests, layout
// checks, screenshots) the same commands are answered through Tauri's IPC mock (ipc-mock.ts).
// Decisions never go through the agent API.

import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { AgentInfo } from "./bindings/AgentInfo";
import type { AuditEntry } from "./bindings/AuditEntry";
import type { BatchResult } from "./bindings/BatchResult";
import type { CredentialMeta } from "./bindings/CredentialMeta";
import type { Page } from "./bindings/Page";
import type { Proposal } from "./bindings/Proposal";
import type { Event } from "./bindings/Event";
import type { Outcome } from "./bindings/Outcome";
import type { Status } from "./bindings/Status";
import type { AllowSimilar } from "./bindings/AllowSimilar";
import type { Decided } from "./bindings/Decided";
import type { NewRule } from "./bindings/NewRule";
import type { Rule } from "./bindings/Rule";
import type { RuleList } from "./bindings/RuleList";
import type { Similar } from "./bindings/Similar";
import type { DeviceInfo } from "./bindings/DeviceInfo";

export type { DeviceInfo };

export type { Outcome };

/** What goes with a decision besides its outcome. */
export interface DecideOptions {
  reason?: string;
  feedback?: string;
  edits?: unknown;
  /** Approve and also save the narrowest rule allowing proposals like this one. */
  allowSimilar?: AllowSimilar;
  /** The payload hash of the proposal on screen: a decision for any other is refused. */
  seen?: string;
  /** Where an approved command runs, when the person chose other than its box. */
  run?: "read" | "workspace" | "unconfined";
  /** The hosts the approved command's box reaches, when the person chose other than those its
   * preview names (`[]`: no network). */
  hosts?: string[];
}

export interface ListParams {
  status?: Status | "";
  agent?: string;
  kind?: string;
  groupId?: string;
  text?: string;
  limit?: number;
  cursor?: string | null;
}

export interface Detail {
  proposal: Proposal;
  audit: AuditEntry[];
  /** SHA-256 of the proposal's canonical payload, sent back with a decision as `seen`. */
  payload_sha256?: string;
}

export interface AppInfo {
  version: string;
  /** The short git hash Assent was built from, or "unknown". */
  commit: string;
  home: string;
  api_url: string;
  owner_credential: string;
  notifications: string;
  kinds: string[];
  limits: Record<string, unknown>;
}

/** The tray's Quit, asked while agents wait: `waiting` agents are blocked on a decision right
 * now, `pending` proposals await one. */
export interface QuitRequest {
  waiting: number;
  pending: number;
}

/** Answering from a phone: the remote listener as the app shows it. */
export interface RemoteStatus {
  enabled: boolean;
  /** The origin the phone opens (kept while off). */
  origin?: string;
  /** 127.0.0.1:PORT, where the tunnel must point, while on. */
  address?: string;
  devices: number;
  subscribed: number;
  /** Seconds a proposal waits before phones are pushed (0: at once). */
  push_after: number;
  ntfy?: string;
}

/** A one-time pairing link, and its QR code (`width` modules a side, "1" dark). */
export interface RemotePairing {
  link: string;
  expires_at: string;
  qr: { width: number; modules: string } | null;
}

/** A change the app hears about: an engine event (generated from the Rust type), or "refetch everything". */
export type Change = Event | { type: "lagged" };

export interface Backend {
  /** The review page on a phone (the remote listener): reading and deciding only. */
  remote?: boolean;
  list(p: ListParams): Promise<Page>;
  get(id: string): Promise<Detail>;
  /** One proposal as the list shows it, where that is lighter than the whole (the phone's). */
  row?(id: string): Promise<Proposal>;
  decide(id: string, outcome: Outcome, opts?: DecideOptions): Promise<Decided>;
  decideBatch(items: { id: string; outcome: Outcome; reason?: string }[]): Promise<BatchResult>;
  /** Decides a batch: one agent's on one node (`node` null on a single-user Assent). */
  decideGroup(groupId: string, agent: string, node: string | null, outcome: Outcome, reason?: string): Promise<BatchResult>;
  retry(id: string): Promise<Proposal>;
  agents(): Promise<AgentInfo[]>;
  addAgent(name: string): Promise<string>;
  revokeAgent(name: string): Promise<void>;
  credentials(): Promise<CredentialMeta[]>;
  addCredential(name: string, scheme: string, hosts: string[], secret: string): Promise<CredentialMeta>;
  removeCredential(name: string): Promise<void>;
  info(): Promise<AppInfo>;
  /** A page of the rules (`after`: the previous page's `next_after`), with how many recent
   * proposals each would have matched and how many prompts each saved this week. */
  rules(after?: number | null): Promise<RuleList>;
  addRule(rule: NewRule): Promise<Rule>;
  removeRule(id: string): Promise<void>;
  /** The rule "approve and allow similar" would save for a pending proposal, not saved. */
  similarRule(id: string): Promise<Similar>;
  /** The inbox's first page, if the host handed it over with the document (once). */
  firstPage(): Page | null;
  /** How many proposals are pending (every agent's). */
  pendingCount(): Promise<number>;
  /** Tells the host the first inbox page is on screen, and how long it took from asking for
   * it (the launch benchmark reads it). */
  rendered(firstPageMs: number): Promise<void>;
  onChange(f: (c: Change) => void): Promise<() => void>;
  onOpen(f: (id: string) => void): Promise<() => void>;
  /** Whether Assent starts when the user logs in. */
  autostart(): Promise<boolean>;
  /** Turns starting at login on or off; the state now in force. */
  setAutostart(enabled: boolean): Promise<boolean>;
  /** Quits Assent (after the user confirmed). */
  quit(): Promise<void>;
  /** The tray's Quit, while agents wait: the app asks first. */
  onQuitRequested(f: (q: QuitRequest) => void): Promise<() => void>;
  remoteStatus(): Promise<RemoteStatus>;
  /** Turns the remote listener on (or changes its origin, or when it pushes). */
  remoteEnable(origin?: string, pushAfter?: number): Promise<RemoteStatus>;
  remoteDisable(): Promise<RemoteStatus>;
  remotePair(name?: string): Promise<RemotePairing>;
  remoteDevices(): Promise<DeviceInfo[]>;
  remoteRevoke(name: string): Promise<void>;
}

/** An error as the backend reports it. */
export interface BackendError {
  code: string;
  message: string;
}

export function errorText(e: unknown): string {
  if (e && typeof e === "object" && "message" in e) return String((e as BackendError).message);
  return String(e);
}

export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}

export async function tauriBackend(): Promise<Backend> {
  return {
    list: (p) => invoke("list_proposals", { ...p, status: p.status || null }),
    get: (id) => invoke("get_proposal", { id }),
    decide: (id, outcome, o = {}) => invoke("decide", { id, outcome, ...o }),
    decideBatch: (items) => invoke("decide_batch", { items }),
    decideGroup: (groupId, agent, node, outcome, reason) => invoke("decide_group", { groupId, agent, node, outcome, reason }),
    retry: (id) => invoke("retry", { id }),
    agents: () => invoke("list_agents"),
    addAgent: (name) => invoke("add_agent", { name }),
    revokeAgent: (name) => invoke("revoke_agent", { name }),
    credentials: () => invoke("list_credentials"),
    addCredential: (name, scheme, hosts, secret) => invoke("add_credential", { name, scheme, hosts, secret }),
    removeCredential: (name) => invoke("remove_credential", { name }),
    info: () => invoke("app_info"),
    rules: (after) => invoke("list_rules", { after: after ?? null }),
    addRule: (rule) => invoke("add_rule", { rule }),
    removeRule: (id) => invoke("remove_rule", { id }),
    similarRule: (id) => invoke("similar_rule", { id }),
    pendingCount: () => invoke("pending_count"),
    firstPage: () => {
      const w = window as unknown as { __ASSENT_FIRST_PAGE__?: Page };
      const page = w.__ASSENT_FIRST_PAGE__ ?? null;
      delete w.__ASSENT_FIRST_PAGE__;
      return page;
    },
    rendered: (firstPageMs) => invoke("ui_ready", { firstPageMs }),
    onChange: (f) => listen<Change>("assent://event", (e) => f(e.payload)),
    onOpen: (f) => listen<{ id: string }>("assent://open", (e) => f(e.payload.id)),
    autostart: () => invoke("get_autostart"),
    setAutostart: (enabled) => invoke("set_autostart", { enabled }),
    quit: () => invoke("quit_app"),
    onQuitRequested: (f) => listen<QuitRequest>("assent://quit-requested", (e) => f(e.payload)),
    remoteStatus: () => invoke("remote_status"),
    remoteEnable: (origin, pushAfter) => invoke("remote_enable", { origin: origin ?? null, port: null, pushAfter: pushAfter ?? null }),
    remoteDisable: () => invoke("remote_disable"),
    remotePair: (name) => invoke("remote_pair", { name: name ?? null }),
    remoteDevices: () => invoke("remote_devices"),
    remoteRevoke: (name) => invoke("remote_revoke", { name }),
  };
}
