/** The client for one agent: propose, read, wait for and withdraw proposals, and follow
 * events. Requests go through openapi-fetch, typed by the paths generated from Assent's
 * OpenAPI document (`schema.d.ts`). */

import createClient, { type Client, type Middleware } from "openapi-fetch";
import { discover, prove, type Endpoint, type Where } from "./discover.js";
import { AssentNotRunning, Refused, Unauthorized } from "./errors.js";
import type { components, paths } from "./schema.js";

export type Proposal = components["schemas"]["Proposal"];
export type NewProposal = components["schemas"]["NewProposal"];
export type ProposedBatch = components["schemas"]["ProposedBatch"];
export type SessionCounts = components["schemas"]["SessionCounts"];

/** The longest the server holds one long-poll; `wait` asks again until it is settled. */
export const SERVER_WAIT_CAP = 120;

export interface Envelope {
  title?: string;
  summary?: string;
  session_id?: string;
  group_id?: string;
  supersedes?: string;
  expires_in?: number;
  lease_secs?: number;
  audience?: string;
  idempotencyKey?: string;
}

export interface WaitOptions {
  /** Seconds to wait in all (none: until settled). */
  timeout?: number;
  /** Withdraw the proposal when the timeout passes undecided. */
  withdrawOnTimeout?: boolean;
  /** Seconds of one long-poll (at most the server's cap). */
  poll?: number;
  /** Aborting withdraws the proposal and rejects with the signal's reason. */
  signal?: AbortSignal;
}

function failure(status: number, body: unknown): Refused {
  const e = (body as { error?: { code?: string; message?: string } } | null)?.error ?? {};
  const code = e.code ?? `http_${status}`;
  const message = e.message ?? "the request failed";
  return status === 401 || status === 403 ? new Unauthorized(code, message, status) : new Refused(code, message, status);
}

export class Assent {
  #where: Where;
  #ep: Endpoint | null = null;
  #api: Client<paths> | null = null;

  /** Left out, `url` and `token` are found as the `assent` command finds them. */
  constructor(where: Where = {}) {
    this.#where = where;
  }

  async #client(): Promise<Client<paths>> {
    if (this.#api) return this.#api;
    const ep = discover(this.#where);
    await prove(ep);
    const auth: Middleware = {
      onRequest({ request }) {
        request.headers.set("authorization", `Bearer ${ep.token}`);
        return request;
      },
    };
    const api = createClient<paths>({ baseUrl: ep.url });
    api.use(auth);
    this.#ep = ep;
    this.#api = api;
    return api;
  }

  async #do<T>(call: (api: Client<paths>) => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const api = await this.#client();
    let r;
    try {
      r = await call(api);
    } catch (e) {
      if ((e as Error).name === "AbortError") throw e;
      this.#api = null;
      throw new AssentNotRunning(`Assent is not running at ${this.#ep?.url} (${(e as Error).message})`);
    }
    if (!r.response.ok) throw failure(r.response.status, r.error);
    return r.data as T;
  }

  /** Files a proposal of any kind. */
  async propose(kind: string, payload: unknown, envelope: Envelope = {}): Promise<Proposal> {
    const { idempotencyKey, ...rest } = envelope;
    const body = { kind, payload, ...rest } as NewProposal;
    return this.#do((api) =>
      api.POST("/v1/proposals", {
        body,
        params: { header: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {} },
      }),
    );
  }

  /** Files a `tool.call`: ask before running `tool` with `input`. */
  proposeTool(tool: string, input: unknown, envelope: Envelope = {}): Promise<Proposal> {
    return this.propose("tool.call", { tool, input }, envelope);
  }

  /** Files several proposals at once, each on its own, in one group: per item the proposal or
   * why it was refused. With a key, a retried batch files nothing twice. */
  proposeBatch(items: NewProposal[], o: { groupId?: string; idempotencyKey?: string } = {}): Promise<ProposedBatch> {
    return this.#do((api) =>
      api.POST("/v1/proposals/batch", {
        body: { items, ...(o.groupId ? { group_id: o.groupId } : {}) },
        params: { header: o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : {} },
      }),
    );
  }

  /** This agent's proposals of a session by status (`pending`: still waiting). */
  session(sessionId: string): Promise<SessionCounts> {
    return this.#do((api) => api.GET("/v1/sessions/{session_id}", { params: { path: { session_id: sessionId } } }));
  }

  get(id: string, wait?: number, signal?: AbortSignal): Promise<Proposal> {
    return this.#do((api) =>
      api.GET("/v1/proposals/{id}", { params: { path: { id }, query: wait === undefined ? {} : { wait } }, signal }),
    );
  }

  /** Withdraws a pending proposal. */
  withdraw(id: string): Promise<Proposal> {
    return this.#do((api) => api.DELETE("/v1/proposals/{id}", { params: { path: { id } } }));
  }

  async #withdrawnOrSettled(id: string): Promise<Proposal> {
    try {
      return await this.withdraw(id);
    } catch (e) {
      if (e instanceof Refused) return this.get(id); // decided meanwhile: that answer stands
      throw e;
    }
  }

  /** Waits until the proposal is settled or `timeout` passes, asking again past the server's
   * cap; aborting `signal` withdraws it. The proposal as last seen. */
  async wait(id: string, o: WaitOptions = {}): Promise<Proposal> {
    const deadline = o.timeout === undefined ? null : Date.now() + o.timeout * 1000;
    const poll = Math.min(o.poll ?? SERVER_WAIT_CAP, SERVER_WAIT_CAP);
    for (;;) {
      const left = deadline === null ? SERVER_WAIT_CAP : Math.floor((deadline - Date.now()) / 1000);
      let p: Proposal;
      try {
        p = await this.get(id, Math.max(0, Math.min(poll, left)), o.signal);
      } catch (e) {
        if (o.signal?.aborted) {
          await this.#withdrawnOrSettled(id);
          throw o.signal.reason ?? e;
        }
        throw e;
      }
      if (p.settled) return p;
      if (deadline !== null && Date.now() >= deadline) return o.withdrawOnTimeout ? this.#withdrawnOrSettled(id) : p;
    }
  }

  /** The agent's events as they happen (`GET /v1/events`). */
  async *events(signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    await this.#client();
    const ep = this.#ep as Endpoint;
    // A connection refused, or one that ends while the stream is read (the server stopped),
    // is Assent not running, as for every other call; a stop the caller asked for stays theirs.
    const gone = (e: unknown): never => {
      if ((e as Error).name === "AbortError") throw e;
      this.#api = null;
      throw new AssentNotRunning(`Assent is not running at ${ep.url} (${(e as Error).message})`);
    };
    const res = await fetch(`${ep.url}/v1/events`, { headers: { authorization: `Bearer ${ep.token}` }, signal }).catch(
      gone,
    );
    if (!res.ok || !res.body) throw failure(res.status, await res.json().catch(() => null));
    const reader = res.body.getReader();
    try {
      yield* this.#blocks(reader, gone);
    } finally {
      // A caller that stops reading closes the stream.
      reader.cancel().catch(() => undefined);
    }
  }

  async *#blocks(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    gone: (e: unknown) => never,
  ): AsyncGenerator<Record<string, unknown>> {
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read().catch(gone);
      // The stream has no end of its own: one the server ends is a server going away.
      if (done) gone(new Error("the server ended the event stream"));
      buf += decoder.decode(value as Uint8Array, { stream: true });
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n");
        if (data) yield JSON.parse(data);
      }
    }
  }

  /** The public keys that sign decisions' receipts (a JWK Set), from the proven server. */
  keys(): Promise<{ keys: Record<string, unknown>[] }> {
    return this.#do((api) => api.GET("/v1/keys")) as Promise<{ keys: Record<string, unknown>[] }>;
  }
}
