import { describe, expect, it } from "vitest";
import { lineDiff, marks, sideBySide, visible } from "./diff";

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

describe("visible", () => {
  it("shows the characters an agent could hide in a name", () => {
    expect(visible("invoice\u202Efdp.sh")).toBe("invoice⟦U+202E⟧fdp.sh");
    for (const c of ["\u2060", "\u00AD", "\u180E", "\u3164", "\u2062", "\u{E0041}", "\uFE01", "\u200B"]) {
      expect(visible(`l${c}s`)).toMatch(/^l⟦U\+[0-9A-F]{4,5}⟧s$/);
    }
  });
  it("leaves plain text and emoji sequences alone", () => {
    expect(visible("/home/me/notes.md")).toBe("/home/me/notes.md");
    expect(visible("ok \u2764\uFE0F")).toBe("ok \u2764\uFE0F");
    expect(visible("\u{1F468}\u200D\u{1F469}\u200D\u{1F467}")).toBe("\u{1F468}\u200D\u{1F469}\u200D\u{1F467}");
    expect(visible("straße é 中")).toBe("straße é 中");
  });
});
