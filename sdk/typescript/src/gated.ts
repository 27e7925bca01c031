/** `gated`: a function that runs only once a person approves the call in Assent, with the
 * arguments they approved. */

import { Assent, type Proposal } from "./client.js";
import { Expired, Failed, Refined, Rejected, Withdrawn } from "./errors.js";
import { verifyReceipt } from "./receipts.js";

/** The approved input of a settled `tool.call` proposal; otherwise throws the NotApproved that
 * says why it must not run (Rejected with the reason, Refined with the feedback, Withdrawn,
 * Failed, or Expired: Assent's own expiry, and what a proposal not yet settled is taken for). */
export function outcome(p: Proposal): Record<string, unknown> {
  const d = p.decision ?? null;
  switch (p.status) {
    case "approved":
    case "applying":
    case "applied": {
      // The input as approved, even when not an object (a person's edit may make it anything
      // JSON): a caller must not take a `null` for "no arguments".
      const approved = (p.approved_payload ?? p.payload) as { input?: Record<string, unknown> };
      return approved.input === undefined ? {} : approved.input;
    }
    case "rejected":
      throw new Rejected(p.id, d?.reason ?? null);
    case "refined":
      throw new Refined(p.id, d?.feedback ?? null);
    case "withdrawn":
      throw new Withdrawn(p.id, "withdrawn before anyone decided");
    case "failed":
      throw new Failed(p.id, p.error?.code ?? "failed", p.error?.message ?? "");
    default:
      throw new Expired(p.id, "nobody decided in time");
  }
}

export interface GateOptions<A> {
  /** The tool's name as the person sees it (default: the function's name). */
  tool?: string;
  /** A line for the person, shown as the agent's words. */
  preview?: (args: A) => string;
  client?: Assent;
  /** Seconds to wait (default an hour). Past them the proposal is withdrawn and the call throws
   * Withdrawn, as the proposal then is in Assent (Expired is Assent's own expiry, its
   * `expires_in`). */
  timeout?: number;
  /** Who the decision's receipt is for. */
  audience?: string;
  /** Check the decision's signed receipt against the arguments before running. */
  receipt?: boolean;
  /** `false` runs the function directly, said explicitly per tool. */
  requiresApproval?: boolean;
  /** `file.write`, `file.delete` or `http.request`: the function builds the payload, and Assent
   * carries it out once approved (an HTTP call with its credential from the keychain); the call
   * returns Assent's result of it. Default `tool.call`: the function itself runs. */
  kind?: string;
  sessionId?: string;
  /** The function's own defaults for arguments a caller may leave out: shown to the person with
   * the caller's arguments (what the caller gave wins), so that what runs is what was shown. */
  defaults?: Partial<A>;
}

/** The approved arguments as one object, or Failed (`arguments_unfit`): a person's edit may make
 * the input anything JSON, and `fn` takes one object of named arguments. */
function argumentsOf(p: Proposal, approved: unknown, tool: string): Record<string, unknown> {
  if (typeof approved === "object" && approved !== null && !Array.isArray(approved)) {
    return approved as Record<string, unknown>;
  }
  throw new Failed(p.id, "arguments_unfit", `the approved input ${JSON.stringify(approved)} is not arguments by name; ${tool} did not run`);
}

/** Wraps `fn(args)` (one object of named arguments, as agent tools take them) so that calling
 * it files a `tool.call` proposal and waits: approved, `fn` runs with exactly the approved
 * arguments, the person's edited input whole when they edited it, never merged with the
 * proposed ones; an edit that deletes an argument shown is Failed (`arguments_unfit`: the
 * function would run its own default for it, which nobody saw), and `defaults` shows the
 * function's defaults with the caller's arguments; otherwise it throws Rejected (with
 * the reason), Refined (with the feedback), Expired (Assent's expiry, `expires_in`, passed) or
 * Withdrawn, and `fn` does not run. A wait past `timeout` seconds withdraws the proposal and
 * throws Withdrawn, as it is then in Assent. */
export function gated<A extends Record<string, unknown>, R>(
  fn: (args: A) => R | Promise<R>,
  o: GateOptions<A> = {},
): (args: A) => Promise<R> {
  if (o.requiresApproval === false) return async (args: A) => fn(args);
  if (o.kind && o.kind !== "tool.call") {
    const kind = o.kind;
    return async (args: A) => {
      const client = o.client ?? new Assent();
      const p = await client.propose(kind, await fn(args), {
        title: o.preview ? String(o.preview(args)).slice(0, 200) : undefined,
        audience: o.audience,
        session_id: o.sessionId,
        lease_secs: 15,
      });
      const done = await client.wait(p.id, { timeout: o.timeout ?? 3600, withdrawOnTimeout: true });
      outcome(done); // throws unless approved
      if (done.status === "failed") throw new Failed(done.id, done.error?.code ?? "failed", done.error?.message ?? "");
      return done.result as R;
    };
  }
  const tool = o.tool ?? fn.name;
  if (!tool) throw new TypeError("gated: name the tool (the function has no name)");
  return async (args: A) => {
    const client = o.client ?? new Assent();
    // What the person sees: the arguments with the function's declared defaults filled in.
    const shown = { ...(o.defaults ?? {}), ...args } as A;
    const p = await client.proposeTool(tool, shown, {
      title: o.preview ? String(o.preview(args)).slice(0, 200) : undefined,
      audience: o.audience,
      session_id: o.sessionId,
      lease_secs: 15,
    });
    const done = await client.wait(p.id, { timeout: o.timeout ?? 3600, withdrawOnTimeout: true });
    const approved = argumentsOf(done, outcome(done), tool);
    // An approved input that leaves out an argument shown would run the function's own default
    // for it (a destructured `recursive = true`), which nobody approved: it does not run.
    const left = Object.keys(shown).filter((k) => !Object.prototype.hasOwnProperty.call(approved, k));
    if (left.length > 0) {
      throw new Failed(
        done.id,
        "arguments_unfit",
        `the approved input leaves out ${left.join(", ")}: ${tool} would run with its own default, which nobody approved; ${tool} did not run`,
      );
    }
    if (o.receipt) {
      await verifyReceipt(done.decision?.receipt ?? "", await client.keys(), { tool, input: approved, audience: o.audience });
    }
    // Exactly what was approved, and nothing of `args`: spreading them under it would bring back
    // an argument the person deleted.
    return fn(approved as A);
  };
}
