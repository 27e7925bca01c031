// A line diff for the person's own edits (the proposal's diff is computed by Assent itself).

export type Line = { tag: " " | "-" | "+"; old: number | null; new: number | null; text: string };

/** Lines of `a` vs `b` by longest common subsequence; bounded to keep the UI responsive. */
export function lineDiff(a: string, b: string, maxCells = 4_000_000): Line[] | null {
  const x = a.split("\n");
  const y = b.split("\n");
  if (x.length * y.length > maxCells) return null;
  const n = x.length, m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: Line[] = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push({ tag: " ", old: i + 1, new: j + 1, text: x[i] });
      i++; j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push({ tag: "-", old: i + 1, new: null, text: x[i] });
      i++;
    } else {
      out.push({ tag: "+", old: null, new: j + 1, text: y[j] });
      j++;
    }
  }
  return out;
}

/** Pairs a hunk's lines for a side-by-side view: removals next to the additions that follow. */
export function sideBySide<T extends { tag: string }>(lines: T[]): [T | null, T | null][] {
  const rows: [T | null, T | null][] = [];
  let k = 0;
  while (k < lines.length) {
    if (lines[k].tag === " ") {
      rows.push([lines[k], lines[k]]);
      k++;
      continue;
    }
    const del: T[] = [], add: T[] = [];
    while (k < lines.length && lines[k].tag === "-") del.push(lines[k++]);
    while (k < lines.length && lines[k].tag === "+") add.push(lines[k++]);
    for (let r = 0; r < Math.max(del.length, add.length); r++) rows.push([del[r] ?? null, add[r] ?? null]);
  }
  return rows;
}

/** Splits a line into plain text and the ⟦U+XXXX⟧ markers Assent puts for invisible characters. */
export function marks(text: string): { text: string; mark: boolean }[] {
  return text.split(/(⟦U\+[0-9A-F]{4,6}⟧)/).filter((s) => s !== "").map((s) => ({ text: s, mark: /^⟦U\+/.test(s) }));
}

const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Variation_Selector}\u{E0000}-\u{E007F}]/u;
const PICTOGRAPH = /[\p{Extended_Pictographic}\p{Emoji_Presentation}]/u;

/** The invisible or bidirectional control characters in `text` (those [`visible`] marks), each
 * with how often it occurs, in order of first appearance. */
export function hiddenChars(text: string): { codepoint: string; count: number }[] {
  const out = new Map<string, number>();
  for (const m of visible(text).matchAll(/⟦(U\+[0-9A-F]{4,6})⟧/g)) out.set(m[1], (out.get(m[1]) ?? 0) + 1);
  return [...out].map(([codepoint, count]) => ({ codepoint, count }));
}

/**
 * Text as a person may safely read it: every invisible or bidirectional control character
 * (the same Unicode properties Assent flags) becomes a visible ⟦U+XXXX⟧ marker, except a
 * presentation selector after an emoji and a joiner between two pictographs. For names Assent
 * did not already render (paths, URLs, header names and values, tool names).
 */
export function visible(text: string): string {
  if (!text || /^[\x00-\x7f]*$/.test(text)) return text ?? "";
  const cps = Array.from(text);
  let out = "";
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    const prev = cps[i - 1] ?? "";
    const next = cps[i + 1] ?? "";
    const afterEmoji = prev !== "" && PICTOGRAPH.test(prev);
    const exempt =
      ((c === "\uFE0E" || c === "\uFE0F") && afterEmoji) ||
      (c === "\u200D" && (afterEmoji || prev === "\uFE0F") && PICTOGRAPH.test(next));
    if (!exempt && HIDDEN.test(c)) {
      out += `⟦U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟧`;
    } else {
      out += c;
    }
  }
  return out;
}
