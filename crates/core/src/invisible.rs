//! Invisible and bidirectional control characters. An agent (or whatever injected text into
//! it) can hide intent behind characters a person cannot see; every preview flags them, and
//! every place Assent shows text to a person renders them visibly (`⟦U+202E⟧`).
//!
//! The set comes from the Unicode Character Database (through ICU4X's compiled property data),
//! not from a hand-made list:
//!
//! - every `Default_Ignorable_Code_Point` (zero-width characters, joiners, word joiner, soft
//!   hyphen, invisible operators, fillers, the whole tag block U+E0000-U+E0FFF, ...);
//! - every `Bidi_Control` (embeddings, overrides, isolates, marks);
//! - every `Variation_Selector`, except U+FE0E and U+FE0F right after an emoji, where they only
//!   choose between text and emoji presentation;
//! - and the tag block U+E0000-U+E007F, always (tags can spell out a hidden message).
//!
//! A ZERO WIDTH JOINER between two pictographs (a family emoji) is an emoji sequence too, and is
//! not flagged there; anywhere else it is.

use icu_properties::CodePointSetData;
use icu_properties::props::{BidiControl, DefaultIgnorableCodePoint, Emoji, ExtendedPictographic, VariationSelector};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

const ZWJ: char = '\u{200D}';

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// True for a character that is flagged wherever it stands (context aside): see the module
/// docs. Every such character is outside ASCII.
pub fn is_flagged(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<BidiControl>().contains(c)
        || CodePointSetData::new::<VariationSelector>().contains(c)
        || is_tag(c)
}

/// A regular-expression class body (without brackets) of every control character (Unicode
/// `Cc`) and every character [`is_flagged`] (which ASCII never is), but `keep`: what a text
/// field refusing them may not contain, for the API's description. Built from the same data
/// the check reads, so the two never differ. Characters of the Basic Multilingual Plane are
/// written `\uXXXX`; those above it literally, as one code point each.
pub fn refused_class(keep: &[char]) -> String {
    let mut ranges: Vec<(u32, u32)> = vec![(0x00, 0x1F), (0x7F, 0x9F), (0xE0000, 0xE007F)];
    for set in [
        CodePointSetData::new::<DefaultIgnorableCodePoint>(),
        CodePointSetData::new::<BidiControl>(),
        CodePointSetData::new::<VariationSelector>(),
    ] {
        ranges.extend(set.iter_ranges().map(|r| (*r.start(), *r.end())));
    }
    // Take out what is kept, then merge what touches.
    for k in keep.iter().map(|&c| c as u32) {
        let mut out = Vec::with_capacity(ranges.len() + 1);
        for (a, b) in ranges {
            if k < a || k > b {
                out.push((a, b));
                continue;
            }
            if k > a {
                out.push((a, k - 1));
            }
            if k < b {
                out.push((k + 1, b));
            }
        }
        ranges = out;
    }
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let one = |c: u32| match char::from_u32(c) {
        Some(ch) if c > 0xFFFF => ch.to_string(),
        _ => format!("\\u{c:04X}"),
    };
    merged.iter().map(|&(a, b)| if a == b { one(a) } else { format!("{}-{}", one(a), one(b)) }).collect()
}

fn is_pictograph(c: char) -> bool {
    CodePointSetData::new::<Emoji>().contains(c) || CodePointSetData::new::<ExtendedPictographic>().contains(c)
}

/// Whether `c`, between `prev` and `next`, is flagged: as [`is_flagged`], except a
/// presentation selector after an emoji and a joiner between two pictographs.
fn flagged_here(prev: Option<char>, c: char, next: Option<char>) -> bool {
    if !is_flagged(c) {
        return false;
    }
    let after_emoji = prev.is_some_and(|p| !p.is_ascii() && is_pictograph(p));
    match c {
        '\u{FE0E}' | '\u{FE0F}' if after_emoji => false,
        ZWJ if (after_emoji || prev == Some('\u{FE0F}')) && next.is_some_and(is_pictograph) => false,
        _ => true,
    }
}

/// The flagged characters of `s`, with their byte offsets, in order.
pub fn flagged(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut prev: Option<char> = None;
    let mut it = s.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some((i, c)) = it.next() {
            let next = it.peek().map(|(_, n)| *n);
            let hit = !c.is_ascii() && flagged_here(prev, c, next);
            prev = Some(c);
            if hit {
                return Some((i, c));
            }
        }
        None
    })
}

/// Whether `s` has a flagged character.
pub fn has_flagged(s: &str) -> bool {
    !s.is_ascii() && flagged(s).next().is_some()
}

/// A short name for a flagged character, for people.
pub fn name(c: char) -> &'static str {
    match c {
        '\u{200B}' => "ZERO WIDTH SPACE",
        '\u{200C}' => "ZERO WIDTH NON-JOINER",
        '\u{200D}' => "ZERO WIDTH JOINER",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202C}' => "POP DIRECTIONAL FORMATTING",
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{061C}' => "ARABIC LETTER MARK",
        '\u{FEFF}' => "ZERO WIDTH NO-BREAK SPACE",
        '\u{00AD}' => "SOFT HYPHEN",
        '\u{034F}' => "COMBINING GRAPHEME JOINER",
        '\u{180E}' => "MONGOLIAN VOWEL SEPARATOR",
        '\u{2060}' => "WORD JOINER",
        '\u{2061}' => "FUNCTION APPLICATION",
        '\u{2062}' => "INVISIBLE TIMES",
        '\u{2063}' => "INVISIBLE SEPARATOR",
        '\u{2064}' => "INVISIBLE PLUS",
        '\u{3164}' => "HANGUL FILLER",
        '\u{115F}' => "HANGUL CHOSEONG FILLER",
        '\u{1160}' => "HANGUL JUNGSEONG FILLER",
        '\u{FFA0}' => "HALFWIDTH HANGUL FILLER",
        c if is_tag(c) => "TAG CHARACTER",
        c if CodePointSetData::new::<VariationSelector>().contains(c) => "VARIATION SELECTOR",
        c if CodePointSetData::new::<BidiControl>().contains(c) => "BIDIRECTIONAL CONTROL",
        _ => "INVISIBLE CHARACTER",
    }
}

/// One kind of flagged character found, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Found {
    /// `U+202E`.
    pub codepoint: String,
    /// `RIGHT-TO-LEFT OVERRIDE`.
    pub name: String,
    /// How many times it occurs.
    pub count: usize,
}

/// Counts flagged characters in a string.
pub fn scan_str(s: &str, into: &mut BTreeMap<char, usize>) {
    if s.is_ascii() {
        return;
    }
    for (_, c) in flagged(s) {
        *into.entry(c).or_default() += 1;
    }
}

/// Counts flagged characters in every string and key of a JSON value.
pub fn scan_json(v: &Value, into: &mut BTreeMap<char, usize>) {
    match v {
        Value::String(s) => scan_str(s, into),
        Value::Array(a) => a.iter().for_each(|x| scan_json(x, into)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            scan_str(k, into);
            scan_json(x, into)
        }),
        _ => {}
    }
}

/// The report for a preview.
pub fn report(found: &BTreeMap<char, usize>) -> Vec<Found> {
    found
        .iter()
        .map(|(c, n)| Found { codepoint: format!("U+{:04X}", *c as u32), name: name(*c).to_string(), count: *n })
        .collect()
}

/// Replaces each flagged character with a visible marker such as `⟦U+202E⟧`, for display.
pub fn make_visible(s: &str) -> String {
    if s.is_ascii() {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut last = 0;
    for (i, c) in flagged(s) {
        out.push_str(&s[last..i]);
        out.push_str(&format!("\u{27E6}U+{:04X}\u{27E7}", c as u32));
        last = i + c.len_utf8();
    }
    out.push_str(&s[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flags_what_the_review_found_unflagged() {
        let hidden = [
            '\u{200B}',
            '\u{200F}',
            '\u{202A}',
            '\u{202E}',
            '\u{2066}',
            '\u{2069}',
            '\u{061C}',
            '\u{FEFF}',
            '\u{2060}',
            '\u{00AD}',
            '\u{180E}',
            '\u{3164}',
            '\u{2061}',
            '\u{2062}',
            '\u{2063}',
            '\u{2064}',
            '\u{E0000}',
            '\u{E0001}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{FE00}',
            '\u{E0100}',
            '\u{034F}',
        ];
        for c in hidden {
            assert!(is_flagged(c), "U+{:04X}", c as u32);
            assert_eq!(make_visible(&format!("l{c}s")), format!("l\u{27E6}U+{:04X}\u{27E7}s", c as u32));
        }
        for c in ['a', ' ', '\t', '\u{2010}', '\u{2029}', 'é', 'ß', '中', '😀', '\u{00A0}'] {
            assert!(!is_flagged(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn agrees_with_the_unicode_properties_on_every_code_point() {
        let di = CodePointSetData::new::<DefaultIgnorableCodePoint>();
        let bidi = CodePointSetData::new::<BidiControl>();
        let vs = CodePointSetData::new::<VariationSelector>();
        let mut flagged_count = 0;
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let want = di.contains(c) || bidi.contains(c) || vs.contains(c) || ('\u{E0000}'..='\u{E007F}').contains(&c);
            assert_eq!(is_flagged(c), want, "U+{:04X}", c as u32);
            // In running text with no emoji around, the context changes nothing.
            let s = format!("a{c}b");
            assert_eq!(has_flagged(&s), want, "U+{:04X} in text", c as u32);
            flagged_count += usize::from(want);
        }
        // The tag block alone is 128 code points; Default_Ignorable is over 4,000.
        assert!(flagged_count > 4000, "{flagged_count}");
    }

    #[test]
    fn emoji_sequences_are_not_flagged_but_their_parts_elsewhere_are() {
        assert!(!has_flagged("ok \u{2764}\u{FE0F} done"), "a heart with emoji presentation");
        assert!(!has_flagged("\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}"), "a family");
        assert!(has_flagged("l\u{FE0F}s"), "a presentation selector after a letter");
        assert!(has_flagged("l\u{200D}s"), "a joiner between letters");
        assert!(has_flagged("\u{1F3F4}\u{E0067}\u{E0062}\u{E007F}"), "tags are always flagged");
    }

    #[test]
    fn scans_keys_and_nested_strings() {
        let mut m = BTreeMap::new();
        scan_json(&json!({"a\u{200B}": ["x\u{202E}y", {"z": "\u{202E}"}], "n": 1}), &mut m);
        let r = report(&m);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].codepoint, "U+200B");
        assert_eq!(r[1], Found { codepoint: "U+202E".into(), name: "RIGHT-TO-LEFT OVERRIDE".into(), count: 2 });
        assert_eq!(make_visible("a\u{202E}b"), "a\u{27E6}U+202E\u{27E7}b");
    }
}
