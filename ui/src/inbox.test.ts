import { describe, expect, it } from "vitest";
import { command, order, rows } from "./inbox";
import type { Proposal } from "./bindings/Proposal";

const p = (id: string, status: string, created: string, extra: Partial<Proposal> = {}) =>
  ({ id, status, created_at: created, group_id: null, supersedes: null, ...extra }) as unknown as Proposal;

describe("order", () => {
  it("puts pending first, then newest first", () => {
    const got = order([p("a", "applied", "2026-01-03"), p("b", "pending", "2026-01-01"), p("c", "pending", "2026-01-02")]);
    expect(got.map((x) => x.id)).toEqual(["c", "b", "a"]);
  });
});

describe("rows", () => {
  it("puts a batch under one header where its first member would be", () => {
    const r = rows([
      p("x", "pending", "2026-01-05"),
      p("g1", "pending", "2026-01-04", { group_id: "g" }),
      p("y", "pending", "2026-01-03"),
      p("g2", "pending", "2026-01-02", { group_id: "g" }),
    ]);
    expect(r.map((x) => (x.type === "group" ? `[${x.group}:${x.count}/${x.pending}]` : x.proposal.id))).toEqual(["x", "[g:2/2]", "g1", "g2", "y"]);
  });
  it("keeps one agent's batch apart from another agent's batch of the same id", () => {
    const r = rows([
      p("a1", "pending", "2026-01-04", { group_id: "g", agent: "alice" }),
      p("b1", "pending", "2026-01-03", { group_id: "g", agent: "bob" }),
      p("a2", "pending", "2026-01-02", { group_id: "g", agent: "alice" }),
      p("b2", "pending", "2026-01-01", { group_id: "g", agent: "bob" }),
    ]);
    expect(r.map((x) => (x.type === "group" ? `[${x.agent}/${x.group}:${x.count}]` : x.proposal.id))).toEqual([
      "[alice/g:2]",
      "a1",
      "a2",
      "[bob/g:2]",
      "b1",
      "b2",
    ]);
  });
  it("keeps a batch of agents of the same name on two nodes of a team apart", () => {
    const r = rows([
      p("a1", "pending", "2026-01-04", { group_id: "g", agent: "default", node: "alpha" }),
      p("b1", "pending", "2026-01-03", { group_id: "g", agent: "default", node: "beta" }),
      p("a2", "pending", "2026-01-02", { group_id: "g", agent: "default", node: "alpha" }),
      p("b2", "pending", "2026-01-01", { group_id: "g", agent: "default", node: "beta" }),
    ]);
    expect(r.map((x) => (x.type === "group" ? `[${x.agent}@${x.node}/${x.group}:${x.count}]` : x.proposal.id))).toEqual([
      "[default@alpha/g:2]",
      "a1",
      "a2",
      "[default@beta/g:2]",
      "b1",
      "b2",
    ]);
  });
  it("marks the revised proposal as superseded", () => {
    const r = rows([p("new", "pending", "2026-01-02", { supersedes: "old" }), p("old", "withdrawn", "2026-01-01")]);
    const old = r.find((x) => x.type === "item" && x.proposal.id === "old");
    expect(old && old.type === "item" && old.superseded).toBe(true);
  });
});

describe("keyboard", () => {
  it("maps the documented keys", () => {
    expect(["j", "k", "a", "r", "e", "f", "x", "/"].map((key) => command({ key }))).toEqual(["down", "up", "approve", "reject", "edit", "refine", "select", "search"]);
  });
  it("does nothing while typing, except Escape", () => {
    const target = { tagName: "TEXTAREA" };
    expect(command({ key: "a", target })).toBeNull();
    expect(command({ key: "Escape", target })).toBe("cancel");
    expect(command({ key: "a", ctrlKey: true })).toBeNull();
  });
});
