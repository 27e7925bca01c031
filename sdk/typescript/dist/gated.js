/** `gated`: a function that runs only once a person approves the call in Assent, with the
 * arguments they approved. */
import { Assent } from "./client.js";
import { Expired, Failed, Refined, Rejected, Withdrawn } from "./errors.js";
import { verifyReceipt } from "./receipts.js";
/** The approved input of a settled `tool.call` proposal; otherwise throws the NotApproved that
 * says why it must not run. */
export function outcome(p) {
    const d = p.decision ?? null;
    switch (p.status) {
        case "approved":
        case "applying":
        case "applied": {
            const approved = (p.approved_payload ?? p.payload);
            return approved.input ?? {};
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
/** Wraps `fn(args)` (one object of named arguments, as agent tools take them) so that calling
 * it files a `tool.call` proposal and waits: approved, `fn` runs with the approved arguments (a
 * person's edits replace arguments at the top level, by name); otherwise it throws Rejected,
 * Refined, Expired or Withdrawn and `fn` does not run. */
export function gated(fn, o = {}) {
    if (o.requiresApproval === false)
        return async (args) => fn(args);
    if (o.kind && o.kind !== "tool.call") {
        const kind = o.kind;
        return async (args) => {
            const client = o.client ?? new Assent();
            const p = await client.propose(kind, await fn(args), {
                title: o.preview ? String(o.preview(args)).slice(0, 200) : undefined,
                audience: o.audience,
                session_id: o.sessionId,
                lease_secs: 15,
            });
            const done = await client.wait(p.id, { timeout: o.timeout ?? 3600, withdrawOnTimeout: true });
            outcome(done); // throws unless approved
            if (done.status === "failed")
                throw new Failed(done.id, done.error?.code ?? "failed", done.error?.message ?? "");
            return done.result;
        };
    }
    const tool = o.tool ?? fn.name;
    if (!tool)
        throw new TypeError("gated: name the tool (the function has no name)");
    return async (args) => {
        const client = o.client ?? new Assent();
        const p = await client.proposeTool(tool, args, {
            title: o.preview ? String(o.preview(args)).slice(0, 200) : undefined,
            audience: o.audience,
            session_id: o.sessionId,
            lease_secs: 15,
        });
        const done = await client.wait(p.id, { timeout: o.timeout ?? 3600, withdrawOnTimeout: true });
        const approved = outcome(done);
        if (o.receipt) {
            await verifyReceipt(done.decision?.receipt ?? "", await client.keys(), { tool, input: approved, audience: o.audience });
        }
        return fn({ ...args, ...approved });
    };
}
