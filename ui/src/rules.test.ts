import { describe as group, expect, it } from "vitest";
import { applies, describe, isEmpty, lasting, quoted, until } from "./rules";

group("a rule in words", () => {
  // The backend's own cases (crates/core/src/rules.rs, descriptions_say_the_rule_in_words).
  it("says what the backend says", () => {
    expect(describe("allow", { agent: "default", tool: "Bash", input: "npm test" })).toBe("allow agent default to run `npm test …` with tool `Bash`");
    expect(describe("deny", { method: "post", host: "api.github.com" })).toBe("refuse to let any agent send POST requests to api.github.com");
    expect(describe("ask", { kind: "file.write", path: "/w/src/**" })).toBe("always ask before any agent may write files matching `/w/src/**`");
    expect(describe("allow", {})).toBe("allow any agent to do anything");
    expect(describe("deny", { kind: "file.delete" })).toBe("refuse to let any agent propose file.delete");
  });
  it("names tool globs and credentials", () => {
    expect(describe("allow", { tool: "mcp__github__*" })).toBe("allow any agent to call tools matching `mcp__github__*`");
    expect(describe("allow", { kind: "http.request", credential: "github" })).toBe("allow any agent to propose http.request with credential `github`");
    expect(describe("allow", { input: "echo `x`" })).toBe("allow any agent to run `echo 'x' …`");
  });
  it("cuts the words where they quote", () => {
    expect(quoted("run `npm test …` with tool `Bash`")).toEqual([
      { text: "run ", code: false },
      { text: "npm test …", code: true },
      { text: " with tool ", code: false },
      { text: "Bash", code: true },
    ]);
  });
});

group("how long a rule lasts", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("counts down to its expiry", () => {
    expect(until(null, now)).toBe("until removed");
    expect(until("2026-01-01T00:00:45Z", now)).toBe("expires in 45 s");
    expect(until("2026-01-01T00:14:59Z", now)).toBe("expires in 14 min");
    expect(until("2026-01-01T05:00:00Z", now)).toBe("expires in 5 h");
    expect(until("2026-01-05T00:00:00Z", now)).toBe("expires in 4 days");
    expect(until("2026-01-01T00:00:00Z", now)).toBe("expired");
    expect(until("2025-12-31T00:00:00Z", now)).toBe("expired");
  });
  it("says the expiry chosen", () => {
    expect([900, 3600, 86400, null].map(lasting)).toEqual(["for 15 min", "for 1 hour", "for 1 day", "until removed"]);
  });
});

group("a match", () => {
  it("is empty when it names nothing", () => {
    expect(isEmpty({})).toBe(true);
    expect(isEmpty({ agent: null, tool: undefined })).toBe(true);
    expect(isEmpty({ host: "api.github.com" })).toBe(false);
  });
  it("offers only the fields of its kind", () => {
    expect(applies("tool", "http.request")).toBe(false);
    expect(applies("host", "http.request")).toBe(true);
    expect(applies("path", "tool.call")).toBe(true);
    expect(applies("method", "")).toBe(true);
    expect(applies("agent", "file.delete")).toBe(true);
  });
});
