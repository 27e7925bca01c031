import { describe, expect, it } from "vitest";
import { countdown } from "./format";

describe("countdown", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("says expired in the past", () => expect(countdown("2025-12-31T23:59:59Z", now)).toBe("expired"));
  it("counts minutes and hours", () => {
    expect(countdown("2026-01-01T00:05:00Z", now)).toBe("in 5 min");
    expect(countdown("2026-01-01T03:00:00Z", now)).toBe("in 3 h");
  });
});
