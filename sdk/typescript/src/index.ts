/** Assent's TypeScript SDK: propose writes to Assent's approval inbox, wait for the person's
 * decision, and gate any function behind one. */

export {
  Assent,
  SERVER_WAIT_CAP,
  type Envelope,
  type Proposal,
  type ProposedBatch,
  type SessionCounts,
  type WaitOptions,
} from "./client.js";
export { discover, homeDir, type Where } from "./discover.js";
export * from "./errors.js";
export { gated, outcome, type GateOptions } from "./gated.js";
export { namesTool, sha256Jcs, verifyReceipt, type Claims, type Expect, type Outcome } from "./receipts.js";
