/** The client for one agent: propose, read, wait for and withdraw proposals, and follow
 * events. Requests go through openapi-fetch, typed by the paths generated from Assent's
 * OpenAPI document (`schema.d.ts`). */

import { setTimeout as sleep } from "node:timers/promises";
import createClient, { type Client, type Middleware } from "openapi-fetch";
import { failed, SHAPES, shaped, unreadable } from "./answers.js";
import { discover, prove, type Endpoint, type Where } from "./discover.js";
import { AssentError, AssentNotRunning, Refused, Unauthorized } from "./errors.js";
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

/** The typed refusal of an answer that is not a success: the API's error code and message when
 * its body gives them (a body that is not the API's error, HTML say, gives `http_STATUS`). */
function failure(status: number, body: unknown): Refused {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof e?.code === "string" ? e.code : `http_${status}`;
  const message = typeof e?.message === "string" ? e.message : "the request failed";
  return status === 401 || status === 403 ? new Unauthorized(code, message, status) : new Refused(code, message, status);
}

/** Errors of the caller's own making, thrown before anything is sent: a body that is not JSON (a
 * BigInt, a cycle). They stay as they are (a TypeError), not taken for Assent not running. */
const callers = new WeakSet<object>();

function serialize(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (e) {
    if (typeof e === "object" && e !== null) callers.add(e);
    throw e;
  }
}

/** One event of the stream, from its `data:` lines: a JSON object, else AssentError (the parse
 * error its cause). */
function event(data: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch (e) {
    throw new AssentError(`an event from Assent is not a JSON object (${(e as Error).message})`, { cause: e });
  }
  if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  const what = `${data.slice(0, 80)}${data.length > 80 ? "..." : ""}`;
  throw new AssentError(`an event from Assent is not a JSON object (${what})`, { cause: new TypeError(`not an object: ${what}`) });
}

/** The client for one agent. Every failure is one of the SDK's errors (`AssentError`), the
 * fetch, JSON or shape error kept as its `cause`: AssentNotRunning when no answer came (the
 * server died mid-wait included), AssentError itself for an answer this SDK cannot read (not
 * JSON, or not the shape the API documents), Refused or Unauthorized for a refusal. */
export class Assent {
  #where: Where;
  #ep: Endpoint | null = null;
  #api: Client<paths> | null = null;

  /** Left out, `url` and `token` are found as the `assent` command finds them (`ASSENT_URL`,
   * `ASSENT_TOKEN`, the home's `server.json` and `agent.token`). The server proves itself with
   * the key in its home's `server.json` (or `ASSENT_PROOF_KEY`) before the token is sent: a
   * `url` without one throws NoProofKey, and nothing is sent. */
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
    const api = createClient<paths>({ baseUrl: ep.url, bodySerializer: serialize });
    api.use(auth);
    this.#ep = ep;
    this.#api = api;
    return api;
  }

  /** An error on the way to or from the server, as the SDK's own (`cause`: the error itself); a
   * stop the caller asked for (`signal` aborted) stays theirs. */
  #failed(request: string, e: unknown, signal?: AbortSignal): unknown {
    if (signal?.aborted || (e as Error | undefined)?.name === "AbortError") return e;
    if (typeof e === "object" && e !== null && callers.has(e)) return e;
    const err = failed((this.#ep as Endpoint).url, request, e);
    if (err instanceof AssentNotRunning) this.#api = null; // found and proved afresh next time
    return err;
  }

  /** `request`'s answer, once its shape is checked (`check`). */
  async #do<T>(
    request: string,
    check: (v: unknown) => string | null,
    call: (api: Client<paths>) => Promise<{ data?: unknown; error?: unknown; response: Response }>,
    signal?: AbortSignal,
  ): Promise<T> {
    const api = await this.#client();
    let r;
    try {
      r = await call(api);
    } catch (e) {
      throw this.#failed(request, e, signal);
    }
    if (!r.response.ok) throw failure(r.response.status, r.error);
    return shaped<T>(request, check, r.data);
  }

  /** Files a proposal of any kind. */
  async propose(kind: string, payload: unknown, envelope: Envelope = {}): Promise<Proposal> {
    const { idempotencyKey, ...rest } = envelope;
    const body = { kind, payload, ...rest } as NewProposal;
    return this.#do<Proposal>("POST /v1/proposals", SHAPES.proposal, (api) =>
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
    return this.#do<ProposedBatch>("POST /v1/proposals/batch", SHAPES.batch, (api) =>
      api.POST("/v1/proposals/batch", {
        body: { items, ...(o.groupId ? { group_id: o.groupId } : {}) },
        params: { header: o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : {} },
      }),
    );
  }

  /** This agent's proposals of a session by status (`pending`: still waiting). */
  session(sessionId: string): Promise<SessionCounts> {
    return this.#do<SessionCounts>(`GET /v1/sessions/${sessionId}`, SHAPES.session, (api) =>
      api.GET("/v1/sessions/{session_id}", { params: { path: { session_id: sessionId } } }),
    );
  }

  get(id: string, wait?: number, signal?: AbortSignal): Promise<Proposal> {
    return this.#do<Proposal>(
      `GET /v1/proposals/${id}`,
      SHAPES.proposal,
      (api) => api.GET("/v1/proposals/{id}", { params: { path: { id }, query: wait === undefined ? {} : { wait } }, signal }),
      signal,
    );
  }

  /** Withdraws a pending proposal. */
  withdraw(id: string): Promise<Proposal> {
    return this.#do<Proposal>(`DELETE /v1/proposals/${id}`, SHAPES.proposal, (api) =>
      api.DELETE("/v1/proposals/{id}", { params: { path: { id } } }),
    );
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
      // Under a second left: the server waits whole seconds, so a long-poll now would answer at
      // once, over and over. Sleep out the rest, then look once more.
      const rest = deadline === null ? 0 : deadline - Date.now();
      if (rest > 0 && rest < 1000) {
        try {
          await sleep(rest, undefined, { signal: o.signal });
        } catch (e) {
          await this.#withdrawnOrSettled(id);
          throw o.signal?.reason ?? e;
        }
      }
    }
  }

  /** The agent's events as they happen (`GET /v1/events`). */
  async *events(signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    await this.#client();
    const ep = this.#ep as Endpoint;
    // A connection refused, or one that ends while the stream is read (the server stopped),
    // is Assent not running, as for every other call; a stop the caller asked for stays theirs.
    const gone = (e: unknown): never => {
      throw this.#failed("GET /v1/events", e, signal);
    };
    const res = await fetch(`${ep.url}/v1/events`, { headers: { authorization: `Bearer ${ep.token}` }, signal }).catch(
      gone,
    );
    if (!res.ok) throw failure(res.status, await res.json().catch(() => null));
    if (!res.body) throw unreadable("GET /v1/events", new TypeError("an answer without a body"));
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
        if (data) yield event(data);
      }
    }
  }

  /** The public keys that sign decisions' receipts (a JWK Set), from the proven server. */
  keys(): Promise<{ keys: Record<string, unknown>[] }> {
    return this.#do<{ keys: Record<string, unknown>[] }>("GET /v1/keys", SHAPES.keys, (api) => api.GET("/v1/keys"));
  }
}
