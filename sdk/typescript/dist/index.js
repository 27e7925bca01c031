/** Assent's TypeScript SDK: propose writes to Assent's approval inbox, wait for the person's
 * decision, and gate any function behind one. */
export { Assent, SERVER_WAIT_CAP, } from "./client.js";
export { discover, homeDir } from "./discover.js";
export * from "./errors.js";
export { gated, outcome } from "./gated.js";
export { namesTool, sha256Jcs, verifyReceipt } from "./receipts.js";
