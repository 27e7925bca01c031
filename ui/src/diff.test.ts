import { describe, expect, it } from "vitest";
import { lineDiff, marks, sideBySide } from "./diff";

describe("lineDiff", () => {
  it("finds the changed line with line numbers", () => {
    const d = lineDiff("a\nb\nc", "a\nB\nc");
    expect(d?.filter((l) => l.tag !== " ")).toEqual([
      { tag: "-", old: 2, new: null, text: "b" },
      { tag: "+", old: null, new: 2, text: "B" },
    ]);
  });
  it("rebuilds both sides", () => {
    const a = "1\n2\n3\n4\n5", b = "0\n1\n3\n4\n6\n5";
    const d = lineDiff(a, b) ?? [];
    expect(d.filter((l) => l.tag !== "+").map((l) => l.text).join("\n")).toBe(a);
    expect(d.filter((l) => l.tag !== "-").map((l) => l.text).join("\n")).toBe(b);
  });
  it("gives up on huge inputs instead of freezing", () => {
    expect(lineDiff("x\n".repeat(5000), "y\n".repeat(5000), 1000)).toBeNull();
  });
});

describe("sideBySide", () => {
  it("pairs removals with the additions that follow", () => {
    const rows = sideBySide([{ tag: " " }, { tag: "-" }, { tag: "-" }, { tag: "+" }]);
    expect(rows.map(([a, b]) => `${a?.tag ?? "_"}${b?.tag ?? "_"}`)).toEqual(["  ", "-+", "-_"]);
  });
});

describe("marks", () => {
  it("separates invisible-character markers", () => {
    expect(marks("a⟦U+200B⟧b")).toEqual([{ text: "a", mark: false }, { text: "⟦U+200B⟧", mark: true }, { text: "b", mark: false }]);
  });
});
