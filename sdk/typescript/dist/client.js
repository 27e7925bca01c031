/** The client for one agent: propose, read, wait for and withdraw proposals, and follow
 * events. Requests go through openapi-fetch, typed by the paths generated from Assent's
 * OpenAPI document (`schema.d.ts`). */
import createClient from "openapi-fetch";
import { discover, prove } from "./discover.js";
import { AssentNotRunning, Refused, Unauthorized } from "./errors.js";
/** The longest the server holds one long-poll; `wait` asks again until it is settled. */
export const SERVER_WAIT_CAP = 120;
function failure(status, body) {
    const e = body?.error ?? {};
    const code = e.code ?? `http_${status}`;
    const message = e.message ?? "the request failed";
    return status === 401 || status === 403 ? new Unauthorized(code, message, status) : new Refused(code, message, status);
}
export class Assent {
    #where;
    #ep = null;
    #api = null;
    /** Left out, `url` and `token` are found as the `assent` command finds them. */
    constructor(where = {}) {
        this.#where = where;
    }
    async #client() {
        if (this.#api)
            return this.#api;
        const ep = discover(this.#where);
        await prove(ep);
        const auth = {
            onRequest({ request }) {
                request.headers.set("authorization", `Bearer ${ep.token}`);
                return request;
            },
        };
        const api = createClient({ baseUrl: ep.url });
        api.use(auth);
        this.#ep = ep;
        this.#api = api;
        return api;
    }
    async #do(call) {
        const api = await this.#client();
        let r;
        try {
            r = await call(api);
        }
        catch (e) {
            if (e.name === "AbortError")
                throw e;
            this.#api = null;
            throw new AssentNotRunning(`Assent is not running at ${this.#ep?.url} (${e.message})`);
        }
        if (!r.response.ok)
            throw failure(r.response.status, r.error);
        return r.data;
    }
    /** Files a proposal of any kind. */
    async propose(kind, payload, envelope = {}) {
        const { idempotencyKey, ...rest } = envelope;
        const body = { kind, payload, ...rest };
        return this.#do((api) => api.POST("/v1/proposals", {
            body,
            params: { header: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {} },
        }));
    }
    /** Files a `tool.call`: ask before running `tool` with `input`. */
    proposeTool(tool, input, envelope = {}) {
        return this.propose("tool.call", { tool, input }, envelope);
    }
    /** Files several proposals at once, each on its own, in one group: per item the proposal or
     * why it was refused. With a key, a retried batch files nothing twice. */
    proposeBatch(items, o = {}) {
        return this.#do((api) => api.POST("/v1/proposals/batch", {
            body: { items, ...(o.groupId ? { group_id: o.groupId } : {}) },
            params: { header: o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : {} },
        }));
    }
    /** This agent's proposals of a session by status (`pending`: still waiting). */
    session(sessionId) {
        return this.#do((api) => api.GET("/v1/sessions/{session_id}", { params: { path: { session_id: sessionId } } }));
    }
    get(id, wait, signal) {
        return this.#do((api) => api.GET("/v1/proposals/{id}", { params: { path: { id }, query: wait === undefined ? {} : { wait } }, signal }));
    }
    /** Withdraws a pending proposal. */
    withdraw(id) {
        return this.#do((api) => api.DELETE("/v1/proposals/{id}", { params: { path: { id } } }));
    }
    async #withdrawnOrSettled(id) {
        try {
            return await this.withdraw(id);
        }
        catch (e) {
            if (e instanceof Refused)
                return this.get(id); // decided meanwhile: that answer stands
            throw e;
        }
    }
    /** Waits until the proposal is settled or `timeout` passes, asking again past the server's
     * cap; aborting `signal` withdraws it. The proposal as last seen. */
    async wait(id, o = {}) {
        const deadline = o.timeout === undefined ? null : Date.now() + o.timeout * 1000;
        const poll = Math.min(o.poll ?? SERVER_WAIT_CAP, SERVER_WAIT_CAP);
        for (;;) {
            const left = deadline === null ? SERVER_WAIT_CAP : Math.floor((deadline - Date.now()) / 1000);
            let p;
            try {
                p = await this.get(id, Math.max(0, Math.min(poll, left)), o.signal);
            }
            catch (e) {
                if (o.signal?.aborted) {
                    await this.#withdrawnOrSettled(id);
                    throw o.signal.reason ?? e;
                }
                throw e;
            }
            if (p.settled)
                return p;
            if (deadline !== null && Date.now() >= deadline)
                return o.withdrawOnTimeout ? this.#withdrawnOrSettled(id) : p;
        }
    }
    /** The agent's events as they happen (`GET /v1/events`). */
    async *events(signal) {
        await this.#client();
        const ep = this.#ep;
        // A connection refused, or one that ends while the stream is read (the server stopped),
        // is Assent not running, as for every other call; a stop the caller asked for stays theirs.
        const gone = (e) => {
            if (e.name === "AbortError")
                throw e;
            this.#api = null;
            throw new AssentNotRunning(`Assent is not running at ${ep.url} (${e.message})`);
        };
        const res = await fetch(`${ep.url}/v1/events`, { headers: { authorization: `Bearer ${ep.token}` }, signal }).catch(gone);
        if (!res.ok || !res.body)
            throw failure(res.status, await res.json().catch(() => null));
        const reader = res.body.getReader();
        try {
            yield* this.#blocks(reader, gone);
        }
        finally {
            // A caller that stops reading closes the stream.
            reader.cancel().catch(() => undefined);
        }
    }
    async *#blocks(reader, gone) {
        const decoder = new TextDecoder();
        let buf = "";
        for (;;) {
            const { done, value } = await reader.read().catch(gone);
            // The stream has no end of its own: one the server ends is a server going away.
            if (done)
                gone(new Error("the server ended the event stream"));
            buf += decoder.decode(value, { stream: true });
            let end;
            while ((end = buf.indexOf("\n\n")) >= 0) {
                const block = buf.slice(0, end);
                buf = buf.slice(end + 2);
                const data = block
                    .split("\n")
                    .filter((l) => l.startsWith("data:"))
                    .map((l) => l.slice(5).trimStart())
                    .join("\n");
                if (data)
                    yield JSON.parse(data);
            }
        }
    }
    /** The public keys that sign decisions' receipts (a JWK Set), from the proven server. */
    keys() {
        return this.#do((api) => api.GET("/v1/keys"));
    }
}
