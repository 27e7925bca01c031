import { describe, expect, it } from "vitest";
import { MockBackend } from "./mock";
import type { Change } from "./api";

describe("the in-memory backend", () => {
  it("pages with a cursor, newest first", async () => {
    const m = new MockBackend({ seed: 250 });
    const first = await m.list({ limit: 100 });
    expect(first.items).toHaveLength(100);
    const second = await m.list({ limit: 100, cursor: first.next_cursor });
    expect(second.items[0].created_at <= first.items[99].created_at).toBe(true);
    expect(new Set([...first.items, ...second.items].map((p) => p.id)).size).toBe(200);
  });
  it("decides once, announces it, and refuses a second decision", async () => {
    const m = new MockBackend();
    const seen: Change[] = [];
    await m.onChange((c) => seen.push(c));
    const id = (await m.list({ status: "pending", kind: "tool.call" })).items[0].id;
    const p = await m.decide(id, "approve");
    expect(p.status).toBe("approved");
    expect(seen.some((c) => c.type === "proposal.updated" && c.proposal.id === id)).toBe(true);
    await expect(m.decide(id, "reject", { reason: "no" })).rejects.toMatchObject({ code: "invalid_state" });
  });
  it("reports already-settled batch items as skipped", async () => {
    const m = new MockBackend();
    const [a, b] = (await m.list({ status: "pending" })).items;
    await m.decide(a.id, "approve");
    const r = await m.decideBatch([{ id: a.id, outcome: "approve" }, { id: b.id, outcome: "approve" }]);
    expect([r.decided, r.skipped]).toEqual([1, 1]);
  });
});
