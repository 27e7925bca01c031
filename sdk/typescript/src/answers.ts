/** Reading Assent's answers: a failure on the way is one of the SDK's errors with the reason as
 * its `cause`, and an answer is checked to be the shape the API documents before the SDK acts
 * on it (a server of another version must not be read as a decision). */

import { AssentError, AssentNotRunning } from "./errors.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** Whether `e` (or an error it was caused by) is a body that could not be decoded (a
 * `content-encoding` the bytes do not match): zlib's errors (`Z_...`) and brotli's
 * (`ERR__ERROR_...`) say so by their code. */
function undecodable(e: unknown): boolean {
  for (let x = e, n = 0; x && n < 8; x = (x as { cause?: unknown }).cause, n++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === "string" && /^(Z_|ERR__ERROR_)/.test(code)) return true;
  }
  return false;
}

/** The SDK's error for an answer to `request` it cannot read: not JSON, not the shape the API
 * documents, or garbled on the way. */
export function unreadable(request: string, e: unknown): AssentError {
  const why = e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e);
  return new AssentError(`Assent's answer to ${request} is not one this SDK can read (${why})`, { cause: e });
}

/** The SDK's error for a request to `url` that failed on the way: Assent not running (nothing
 * answered, or the connection ended mid-answer), or an answer it cannot read (a body that is not
 * JSON, or does not decode). */
export function failed(url: string, request: string, e: unknown): AssentError {
  if (e instanceof SyntaxError || undecodable(e)) return unreadable(request, e);
  const why = e instanceof Error ? e.message : String(e);
  return new AssentNotRunning(`Assent is not running at ${url} (${why})`, { cause: e });
}

/** A check of one answer's shape: what is wrong with `v`, or null. */
type Check = (v: unknown) => string | null;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const STATUSES: readonly Schemas["Status"][] = [
  "pending", "approved", "applying", "applied", "failed", "rejected", "refined", "expired", "withdrawn",
];

/** Each field's check; a field whose name ends in `?` may be missing or null. */
function fields(spec: Record<string, Check>): Check {
  return (v) => {
    if (!isObject(v)) return `expected an object, got ${JSON.stringify(v) ?? String(v)}`;
    for (const [key, check] of Object.entries(spec)) {
      const optional = key.endsWith("?");
      const name = optional ? key.slice(0, -1) : key;
      const x = v[name];
      if (optional && (x === undefined || x === null)) continue;
      const wrong = check(x);
      if (wrong) return `${name}: ${wrong}`;
    }
    return null;
  };
}
const string: Check = (v) => (typeof v === "string" ? null : `expected a string, got ${JSON.stringify(v) ?? "nothing"}`);
const number: Check = (v) => (typeof v === "number" ? null : `expected a number, got ${JSON.stringify(v) ?? "nothing"}`);
const boolean: Check = (v) => (typeof v === "boolean" ? null : `expected true or false, got ${JSON.stringify(v) ?? "nothing"}`);
const present: Check = (v) => (v === undefined ? "missing" : null);
const object: Check = (v) => (isObject(v) ? null : `expected an object, got ${JSON.stringify(v) ?? "nothing"}`);
const listOf = (each: Check): Check => (v) => {
  if (!Array.isArray(v)) return `expected a list, got ${JSON.stringify(v) ?? "nothing"}`;
  for (const [n, x] of v.entries()) {
    const wrong = each(x);
    if (wrong) return `[${n}] ${wrong}`;
  }
  return null;
};
const status: Check = (v) =>
  STATUSES.includes(v as Schemas["Status"]) ? null : `expected one of ${STATUSES.join(", ")}, got ${JSON.stringify(v) ?? "nothing"}`;

/** What the SDK reads of a proposal: its status and whether it is settled decide what a caller
 * does, so neither is ever guessed. */
const proposal = fields({
  id: string,
  kind: string,
  status,
  settled: boolean,
  payload: present,
  "decision?": fields({ outcome: string, "reason?": string, "feedback?": string, "receipt?": string }),
  "error?": fields({ code: string, message: string }),
});

export const SHAPES = {
  proposal,
  batch: fields({ group_id: string, items: listOf(fields({ index: number, "proposal?": proposal, "error?": object })), filed: number, refused: number }),
  session: fields({ session_id: string, pending: number, total: number, by_status: object }),
  keys: fields({ keys: listOf(object) }),
} satisfies Record<string, Check>;

/** `v` as the answer to `request`, once `check` finds nothing wrong with it; else the SDK's error
 * for an answer it cannot read (the mismatch its cause). */
export function shaped<T>(request: string, check: Check, v: unknown): T {
  const wrong = check(v);
  if (wrong) throw unreadable(request, new TypeError(`not the shape the API documents: ${wrong}`));
  return v as T;
}
