// The review page's backend: the remote listener's `/api`, reached from a phone through the
// person's own tunnel. A session cookie only reads; every decision is its own passkey
// assertion, over a challenge the server derives from exactly what is decided (the proposals
// and the hashes of the payloads this page showed, the outcome, the reason or edits).

import type { Backend, Change, DecideOptions, Detail, ListParams, Outcome } from "./api";
import type { BatchResult } from "./bindings/BatchResult";
import type { Decided } from "./bindings/Decided";
import type { Page } from "./bindings/Page";
import type { Proposal } from "./bindings/Proposal";

/** What the listener answers on failure. */
export class RemoteError extends Error {
  constructor(
    public code: string,
    message: string,
    public status: number,
  ) {
    super(message);
  }
}

// --- WebAuthn's JSON forms: bytes travel as base64url. ---

export function fromB64url(s: string): ArrayBuffer {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}

export function toB64url(b: ArrayBuffer | ArrayBufferView | null): string | null {
  if (!b) return null;
  const bytes = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  let bin = "";
  for (const x of bytes) bin += String.fromCharCode(x);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

type Json = Record<string, unknown>;

/** Creation options as the server sends them, with their bytes decoded for the browser. */
export function creationOptions(o: Json): CredentialCreationOptions {
  const pk = { ...(o.publicKey as Json) };
  pk.challenge = fromB64url(pk.challenge as string);
  pk.user = { ...(pk.user as Json), id: fromB64url((pk.user as Json).id as string) };
  pk.excludeCredentials = ((pk.excludeCredentials as Json[] | undefined) ?? []).map((c) => ({ ...c, id: fromB64url(c.id as string) }));
  return { publicKey: pk as unknown as PublicKeyCredentialCreationOptions };
}

/** Request options as the server sends them, with their bytes decoded for the browser. */
export function requestOptions(o: Json): CredentialRequestOptions {
  const pk = { ...(o.publicKey as Json) };
  pk.challenge = fromB64url(pk.challenge as string);
  pk.allowCredentials = ((pk.allowCredentials as Json[] | undefined) ?? []).map((c) => ({ ...c, id: fromB64url(c.id as string) }));
  return { publicKey: pk as unknown as PublicKeyCredentialRequestOptions };
}

/** A credential the browser made or signed with, as JSON for the server. */
export function credentialJson(c: PublicKeyCredential): Json {
  const r = c.response as AuthenticatorAttestationResponse & AuthenticatorAssertionResponse;
  const response: Json = { clientDataJSON: toB64url(r.clientDataJSON) };
  if ("attestationObject" in r && r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    if (typeof r.getTransports === "function") response.transports = r.getTransports();
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    response.userHandle = toB64url(r.userHandle);
  }
  return { id: c.id, rawId: toB64url(c.rawId), type: c.type, response, extensions: c.getClientExtensionResults?.() ?? {} };
}

/** The phone's passkey, behind an interface so tests can stand in for it. */
export interface Authenticator {
  create(o: CredentialCreationOptions): Promise<PublicKeyCredential>;
  get(o: CredentialRequestOptions): Promise<PublicKeyCredential>;
}

export const browserAuthenticator: Authenticator = {
  create: async (o) => (await navigator.credentials.create(o)) as PublicKeyCredential,
  get: async (o) => (await navigator.credentials.get(o)) as PublicKeyCredential,
};

/** A proposal as the listener shows it: with the hash of its payload, which a decision names. */
type Shown = Proposal & { payload_sha256: string };

export class Remote {
  /** The hash of each proposal's payload as this page last showed it. */
  private hashes = new Map<string, string>();

  constructor(
    private auth: Authenticator = browserAuthenticator,
    private base = "",
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}/api${path}`, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const v = text ? JSON.parse(text) : null;
    if (!res.ok) {
      const e = v?.error ?? {};
      throw new RemoteError(e.code ?? "http_error", e.message ?? `HTTP ${res.status}`, res.status);
    }
    return v as T;
  }

  private seen<T extends Shown>(p: T): T {
    this.hashes.set(p.id, p.payload_sha256);
    return p;
  }

  /** Who this session is, or null when a login is needed. */
  async me(): Promise<{ device: string; pending: number } | null> {
    try {
      return await this.call("GET", "/me");
    } catch (e) {
      if (e instanceof RemoteError && e.code === "session_required") return null;
      throw e;
    }
  }

  /** Pairs this phone with the code from the link, creating its passkey. */
  async pair(code: string, name: string): Promise<string> {
    const asked = await this.call<{ ceremony: string; options: Json }>("POST", "/pair/options", { code, name });
    const created = await this.auth.create(creationOptions(asked.options));
    const r = await this.call<{ device: string }>("POST", "/pair", { ceremony: asked.ceremony, credential: credentialJson(created) });
    return r.device;
  }

  /** Logs in with the passkey this phone holds. */
  async login(): Promise<string> {
    const asked = await this.call<{ ceremony: string; options: Json }>("POST", "/login/options", {});
    const signed = await this.auth.get(requestOptions(asked.options));
    const r = await this.call<{ device: string }>("POST", "/login", { ceremony: asked.ceremony, credential: credentialJson(signed) });
    return r.device;
  }

  /** Whether this device gets pushes, and the key its browser subscribes with. */
  async pushState(): Promise<{ public_key: string | null; subscribed: boolean }> {
    return this.call("GET", "/push");
  }

  /** Asks this browser for a push subscription and gives it to Assent (a push carries a count only). */
  async enablePush(publicKey: string): Promise<void> {
    const reg = await navigator.serviceWorker.ready;
    const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromB64url(publicKey) });
    const j = sub.toJSON();
    await this.call("PUT", "/push", { endpoint: j.endpoint, keys: { p256dh: j.keys?.p256dh, auth: j.keys?.auth } });
  }

  async disablePush(): Promise<void> {
    const reg = await navigator.serviceWorker.getRegistration();
    await (await reg?.pushManager.getSubscription())?.unsubscribe();
    await this.call("DELETE", "/push");
  }

  async logout(): Promise<void> {
    await this.call("POST", "/logout", {});
  }

  /** One decision over `ids`: asked, signed by the passkey, answered. */
  async sign(ids: string[], outcome: Outcome, o: { reason?: string; feedback?: string; edits?: unknown } = {}): Promise<BatchResult> {
    const items = [];
    for (const id of ids) {
      if (!this.hashes.has(id)) await this.get(id);
      items.push({ id, payload_sha256: this.hashes.get(id) });
    }
    const said: Json = { items, outcome };
    if (o.reason !== undefined) said.reason = o.reason;
    if (o.feedback !== undefined) said.feedback = o.feedback;
    if (o.edits !== undefined) said.edits = o.edits;
    const asked = await this.call<{ nonce: string; options: Json }>("POST", "/decisions/options", said);
    const signed = await this.auth.get(requestOptions(asked.options));
    return this.call<BatchResult>("POST", "/decisions", { ...said, nonce: asked.nonce, credential: credentialJson(signed) });
  }

  async get(id: string): Promise<Detail> {
    const d = await this.call<{ proposal: Shown; audit: Detail["audit"] }>("GET", `/proposals/${encodeURIComponent(id)}`);
    return { proposal: this.seen(d.proposal), audit: d.audit, payload_sha256: d.proposal.payload_sha256 };
  }

  /** One proposal as a row of the list (what a row shows, never its whole payload). */
  async row(id: string): Promise<Proposal> {
    const d = await this.call<{ proposal: Shown }>("GET", `/proposals/${encodeURIComponent(id)}?view=row`);
    return this.seen(d.proposal);
  }

  async list(p: ListParams): Promise<Page> {
    const q = new URLSearchParams();
    if (p.status) q.set("status", p.status);
    if (p.kind) q.set("kind", p.kind);
    if (p.agent) q.set("agent", p.agent);
    if (p.text?.trim()) q.set("q", p.text.trim());
    if (p.limit) q.set("limit", String(p.limit));
    if (p.cursor) q.set("cursor", p.cursor);
    const page = await this.call<{ items: Shown[]; next_cursor: string | null }>("GET", `/proposals?${q}`);
    return { items: page.items.map((x) => this.seen(x)), next_cursor: page.next_cursor };
  }
}

const notHere = (what: string) => () => Promise.reject(new RemoteError("not_on_phone", `${what} is done on the desktop`, 0));

/** The inbox's backend on the phone: reading and deciding, nothing else. */
export function remoteBackend(r: Remote): Backend {
  const decided = async (result: BatchResult): Promise<BatchResult> => {
    const bad = result.results.find((x) => x.result === "error");
    if (bad?.error) throw new RemoteError(bad.error.code, bad.error.message, 0);
    return result;
  };
  return {
    remote: true,
    list: (p) => r.list(p),
    get: (id) => r.get(id),
    row: (id) => r.row(id),
    decide: async (id, outcome, o: DecideOptions = {}): Promise<Decided> => {
      const result = await decided(await r.sign([id], outcome, { reason: o.reason, feedback: o.feedback, edits: o.edits }));
      const skipped = result.results.find((x) => x.result === "skipped");
      if (skipped) throw new RemoteError("invalid_state", `This proposal was already ${skipped.status ?? "settled"} elsewhere`, 0);
      return { ...(await r.get(id)).proposal, rule: null };
    },
    decideBatch: async (items) => {
      // One passkey assertion per outcome and reason: the same for every item of a batch.
      const groups = new Map<string, { outcome: Outcome; reason?: string; ids: string[] }>();
      for (const i of items) {
        const key = JSON.stringify([i.outcome, i.reason ?? null]);
        const g = groups.get(key) ?? { outcome: i.outcome, reason: i.reason, ids: [] };
        g.ids.push(i.id);
        groups.set(key, g);
      }
      const all: BatchResult = { results: [], decided: 0, approved: 0, rejected: 0, refined: 0, skipped: 0, failed: 0 };
      for (const g of groups.values()) {
        const x = await r.sign(g.ids, g.outcome, { reason: g.reason });
        all.results.push(...x.results);
        all.decided += x.decided;
        all.approved += x.approved;
        all.rejected += x.rejected;
        all.refined += x.refined;
        all.skipped += x.skipped;
        all.failed += x.failed;
      }
      return all;
    },
    decideGroup: notHere("Deciding a whole batch"),
    retry: notHere("Proposing a failed write again"),
    agents: notHere("Managing agents"),
    addAgent: notHere("Managing agents"),
    revokeAgent: notHere("Managing agents"),
    credentials: notHere("Managing credentials"),
    addCredential: notHere("Managing credentials"),
    removeCredential: notHere("Managing credentials"),
    info: notHere("Settings"),
    rules: notHere("Managing rules"),
    addRule: notHere("Managing rules"),
    removeRule: notHere("Managing rules"),
    similarRule: notHere("Allowing similar proposals"),
    firstPage: () => null,
    pendingCount: async () => (await r.me())?.pending ?? 0,
    rendered: async () => {},
    onChange: async (f: (c: Change) => void) => {
      const es = new EventSource(`/api/events`);
      for (const name of ["proposal.created", "proposal.updated", "lagged"]) {
        es.addEventListener(name, (e) => f(JSON.parse((e as MessageEvent).data) as Change));
      }
      // The stream ends with the session (revoked, expired, logged out): say so by reloading.
      es.onerror = () => {
        if (es.readyState === EventSource.CLOSED) f({ type: "lagged" });
      };
      // Each time the stream opens, what happened before it was never heard: a proposal filed
      // between the list's loading and the stream's first opening, or while a cut stream (the
      // network, the tunnel, the listener making room) was taken up again by the browser.
      // Reloading once it is open shows it.
      es.onopen = () => f({ type: "lagged" });
      return () => es.close();
    },
    onOpen: async (f) => {
      const open = () => {
        const m = location.hash.match(/^#open=(.+)$/);
        if (m) f(decodeURIComponent(m[1]));
      };
      window.addEventListener("hashchange", open);
      open();
      return () => window.removeEventListener("hashchange", open);
    },
    autostart: async () => false,
    setAutostart: async () => false,
    quit: async () => {},
    onQuitRequested: async () => () => {},
    remoteStatus: notHere("Answering from a phone is set up"),
    remoteEnable: notHere("Answering from a phone is set up"),
    remoteDisable: notHere("Answering from a phone is set up"),
    remotePair: notHere("Pairing"),
    remoteDevices: notHere("Managing devices"),
    remoteRevoke: notHere("Managing devices"),
  };
}
