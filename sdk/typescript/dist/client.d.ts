/** The client for one agent: propose, read, wait for and withdraw proposals, and follow
 * events. Requests go through openapi-fetch, typed by the paths generated from Assent's
 * OpenAPI document (`schema.d.ts`). */
import { type Where } from "./discover.js";
import type { components } from "./schema.js";
export type Proposal = components["schemas"]["Proposal"];
export type NewProposal = components["schemas"]["NewProposal"];
export type ProposedBatch = components["schemas"]["ProposedBatch"];
export type SessionCounts = components["schemas"]["SessionCounts"];
/** The longest the server holds one long-poll; `wait` asks again until it is settled. */
export declare const SERVER_WAIT_CAP = 120;
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
export declare class Assent {
    #private;
    /** Left out, `url` and `token` are found as the `assent` command finds them. */
    constructor(where?: Where);
    /** Files a proposal of any kind. */
    propose(kind: string, payload: unknown, envelope?: Envelope): Promise<Proposal>;
    /** Files a `tool.call`: ask before running `tool` with `input`. */
    proposeTool(tool: string, input: unknown, envelope?: Envelope): Promise<Proposal>;
    /** Files several proposals at once, each on its own, in one group: per item the proposal or
     * why it was refused. With a key, a retried batch files nothing twice. */
    proposeBatch(items: NewProposal[], o?: {
        groupId?: string;
        idempotencyKey?: string;
    }): Promise<ProposedBatch>;
    /** This agent's proposals of a session by status (`pending`: still waiting). */
    session(sessionId: string): Promise<SessionCounts>;
    get(id: string, wait?: number, signal?: AbortSignal): Promise<Proposal>;
    /** Withdraws a pending proposal. */
    withdraw(id: string): Promise<Proposal>;
    /** Waits until the proposal is settled or `timeout` passes, asking again past the server's
     * cap; aborting `signal` withdraws it. The proposal as last seen. */
    wait(id: string, o?: WaitOptions): Promise<Proposal>;
    /** The agent's events as they happen (`GET /v1/events`). */
    events(signal?: AbortSignal): AsyncGenerator<Record<string, unknown>>;
    /** The public keys that sign decisions' receipts (a JWK Set), from the proven server. */
    keys(): Promise<{
        keys: Record<string, unknown>[];
    }>;
}
