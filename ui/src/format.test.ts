import { describe, expect, it } from "vitest";
import { countdown, onNode, quitText, versionText } from "./format";

describe("countdown", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("says expired in the past", () => expect(countdown("2025-12-31T23:59:59Z", now)).toBe("expired"));
  it("counts minutes and hours", () => {
    expect(countdown("2026-01-01T00:05:00Z", now)).toBe("in 5 min");
    expect(countdown("2026-01-01T03:00:00Z", now)).toBe("in 3 h");
  });
});

describe("versionText", () => {
  it("reads as assent --version does, without the name", () => {
    expect(versionText({ version: "0.1.0", commit: "3f2a9c1" })).toBe("0.1.0 (commit 3f2a9c1)");
    expect(versionText({ version: "0.1.0", commit: "unknown" })).toBe("0.1.0 (commit unknown)");
  });
});

describe("quitText", () => {
  const rest = "If you quit, they get no answer until Assent runs again.";
  it("counts agents and proposals, singular and plural", () => {
    expect(quitText({ waiting: 2, pending: 5 })).toBe(`2 agents are waiting for a decision (5 proposals pending). ${rest}`);
    expect(quitText({ waiting: 1, pending: 1 })).toBe(`1 agent is waiting for a decision (1 proposal pending). ${rest}`);
    expect(quitText({ waiting: 1, pending: 3 })).toBe(`1 agent is waiting for a decision (3 proposals pending). ${rest}`);
    expect(quitText({ waiting: 2, pending: 0 })).toBe(`2 agents are waiting for a decision. ${rest}`);
  });
  it("names only the pending part when no agent waits", () => {
    expect(quitText({ waiting: 0, pending: 5 })).toBe("5 proposals are pending. If you quit, they stay pending until Assent runs again.");
    expect(quitText({ waiting: 0, pending: 1 })).toBe("1 proposal is pending. If you quit, it stays pending until Assent runs again.");
  });
});

describe("onNode", () => {
  it("names the node when there is one, and nothing otherwise", () => {
    expect(onNode("alpha")).toBe(" on alpha");
    expect(onNode(undefined)).toBe("");
    expect(onNode(null)).toBe("");
    expect(onNode("")).toBe("");
  });
});
