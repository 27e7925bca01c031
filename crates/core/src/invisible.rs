//! Invisible and bidirectional control characters. An agent (or whatever injected text into
//! it) can hide intent behind characters a person cannot see; every preview flags them.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// True for the characters that are flagged: zero-width and directional marks (U+200B-U+200F),
/// bidirectional embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069), the
/// Arabic letter mark (U+061C) and the byte-order mark / zero-width no-break space (U+FEFF).
pub fn is_flagged(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{061C}' | '\u{FEFF}')
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
        _ => "INVISIBLE CHARACTER",
    }
}

/// One kind of flagged character found, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// `U+202E`.
    pub codepoint: String,
    /// `RIGHT-TO-LEFT OVERRIDE`.
    pub name: &'static str,
    /// How many times it occurs.
    pub count: usize,
}

/// Counts flagged characters in a string.
pub fn scan_str(s: &str, into: &mut BTreeMap<char, usize>) {
    for c in s.chars().filter(|c| is_flagged(*c)) {
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
    found.iter().map(|(c, n)| Found { codepoint: format!("U+{:04X}", *c as u32), name: name(*c), count: *n }).collect()
}

/// Replaces each flagged character with a visible marker such as `⟦U+202E⟧`, for display.
pub fn make_visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_flagged(c) {
            out.push_str(&format!("\u{27E6}U+{:04X}\u{27E7}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flags_each_listed_range() {
        for c in ['\u{200B}', '\u{200F}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{061C}', '\u{FEFF}'] {
            assert!(is_flagged(c), "{c:?}");
        }
        for c in ['a', ' ', '\u{2010}', '\u{2029}', '\u{206A}', 'é'] {
            assert!(!is_flagged(c), "{c:?}");
        }
    }

    #[test]
    fn scans_keys_and_nested_strings() {
        let mut m = BTreeMap::new();
        scan_json(&json!({"a\u{200B}": ["x\u{202E}y", {"z": "\u{202E}"}], "n": 1}), &mut m);
        let r = report(&m);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].codepoint, "U+200B");
        assert_eq!(r[1], Found { codepoint: "U+202E".into(), name: "RIGHT-TO-LEFT OVERRIDE", count: 2 });
        assert_eq!(make_visible("a\u{202E}b"), "a\u{27E6}U+202E\u{27E7}b");
    }
}
