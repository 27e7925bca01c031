import { describe, expect, it } from "vitest";
import { auditNote, countdown, onNode, payloadBytes, quitText, size, utf8Bytes, versionText, what, whatParts } from "./format";

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

describe("what", () => {
  it("says what a call does from its payload, never from the agent's title", () => {
    expect(what({ kind: "tool.call", payload: { tool: "Bash", input: { command: "rm -rf build\necho done" } } })).toBe("Bash: rm -rf build");
    expect(what({ kind: "tool.call", payload: { tool: "shell", input: { command: ["bash", "-lc", "git push"] } } })).toBe("shell: git push");
    expect(what({ kind: "tool.call", payload: { tool: "shell", input: { command: ["ls", "-la"] } } })).toBe("shell: ls -la");
    expect(what({ kind: "tool.call", payload: { tool: "Write", input: { file_path: "/tmp/x" } } })).toBe("Write: /tmp/x");
    expect(what({ kind: "tool.call", payload: { tool: "mcp__x__y", input: { n: 1 } } })).toBe("mcp__x__y");
    // As a row: the file's name apart, so that a narrow row cuts the folders, never the name.
    const deep = `/home/me/projects/${"deeply/".repeat(12)}notes.md`;
    expect(what({ kind: "file.write", payload: { path: deep } })).toBe(`Write ${deep}`);
    expect(whatParts({ kind: "file.write", payload: { path: deep } })).toEqual([`Write ${deep.slice(0, -8)}`, "notes.md"]);
    expect(whatParts({ kind: "tool.call", payload: { tool: "Edit", input: { file_path: "/a/b.rs" } } })).toEqual(["Edit: /a/", "b.rs"]);
    expect(whatParts({ kind: "tool.call", payload: { tool: "Bash", input: { command: "cat /a/b" } } })).toEqual(["Bash: cat /a/b", ""]);
    expect(whatParts({ kind: "file.write", payload: { path: "/tmp/" } })).toEqual(["Write /tmp/", ""]);
    expect(what({ kind: "file.delete", payload: { path: "/a/b" } })).toBe("Delete /a/b");
    expect(what({ kind: "http.request", payload: { method: "POST", url: "https://h/x" } })).toBe("POST https://h/x");
  });
});

describe("auditNote", () => {
  it("shows what Assent wrote in words on an audit row, and nothing else", () => {
    const lapsed = { reason: "lease_lapsed", message: "nobody waited for the answer for 15 seconds (the agent's lease lapsed)" };
    expect(auditNote(lapsed)).toBe(lapsed.message);
    expect(auditNote({ reason: "lease_lapsed" })).toBeNull();
    expect(auditNote({ message: 5 })).toBeNull();
    expect(auditNote(["message"])).toBeNull();
    expect(auditNote(null)).toBeNull();
    expect(auditNote("message")).toBeNull();
  });
});

describe("size", () => {
  it("says a size as a phone would", () => {
    expect(size(812)).toBe("812 B");
    expect(size(1500)).toBe("1.5 KB");
    expect(size(64_000)).toBe("64 KB");
    expect(size(3_800_000)).toBe("3.8 MB");
    expect(size(42_000_000)).toBe("42 MB");
  });
  it("counts UTF-8 bytes and reads a light row's size", () => {
    expect(utf8Bytes("aé😀")).toBe(1 + 2 + 4);
    expect(payloadBytes({ payload_bytes: 12 })).toBe(12);
    expect(payloadBytes({})).toBeNull();
  });
});
