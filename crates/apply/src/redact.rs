//! Keeping a credential's secret out of what an HTTP call returns.
//!
//! A server that is allowed to receive the secret may echo it back, and not always as it was
//! sent: JSON-escaped, percent-encoded, HTML-escaped, in base64 or hex, or cut in the middle
//! where the stored body ends, or inside a longer text encoded in base64 at once. Everything
//! stored from a response goes through [`redact`], which finds the secret in any mix of those
//! encodings, character by character, and replaces it.
//!
//! Where it stops: a server allowed to receive the secret can always return it transformed in
//! a way no redactor foresees (reversed, split by markup, encrypted). Those are out of scope by
//! design; the boundary is the credential's allowed origins (docs/api.md, "Where redaction stops").

use base64::Engine as _;

/// What replaces the secret.
pub const MARK: &str = "[REDACTED]";

/// The shortest secret worth looking for: shorter ones would match ordinary text.
const MIN_SECRET: usize = 4;
/// At the end of a cut body, a beginning of the secret this long (in characters) is redacted.
const MIN_CUT_PREFIX: usize = 8;

fn named_entity(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&apos;"),
        '/' => Some("&sol;"),
        '=' => Some("&equals;"),
        '+' => Some("&plus;"),
        _ => None,
    }
}

fn json_escape(c: char) -> Option<&'static str> {
    match c {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        _ => None,
    }
}

/// Every way one character of the secret may appear in a response, each with whether its
/// letters may differ in case (hex digits): literal, percent-encoded (each UTF-8 byte), `+`
/// for a space, HTML decimal, hex and named references, and JSON escapes (`\uXXXX`, with
/// surrogate pairs beyond the BMP).
fn forms(c: char) -> Vec<(String, bool)> {
    let mut out = vec![(c.to_string(), false)];
    let mut utf8 = [0u8; 4];
    let pct: String = c.encode_utf8(&mut utf8).bytes().map(|b| format!("%{b:02X}")).collect();
    out.push((pct, true));
    if c == ' ' {
        out.push(("+".into(), false));
    }
    out.push((format!("&#{};", c as u32), false));
    out.push((format!("&#x{:X};", c as u32), true));
    out.push((format!("&#x{:04X};", c as u32), true));
    if let Some(e) = named_entity(c) {
        out.push((e.into(), false));
    }
    if let Some(e) = json_escape(c) {
        out.push((e.into(), false));
    }
    let mut units = [0u16; 2];
    let u: String = c.encode_utf16(&mut units).iter().map(|u| format!("\\u{u:04X}")).collect();
    out.push((u, true));
    out
}

fn starts_with_form(text: &[u8], form: &str, fold: bool) -> bool {
    let f = form.as_bytes();
    text.len() >= f.len() && if fold { text[..f.len()].eq_ignore_ascii_case(f) } else { &text[..f.len()] == f }
}

/// A secret and every whole-value encoding of it that cannot be matched one character at a
/// time (base64, hex).
struct Needle {
    chars: Vec<Vec<(String, bool)>>,
    whole: Vec<String>,
    /// The bytes a match can start with (ASCII-folded): most positions are passed over on one
    /// look-up.
    first: [bool; 256],
}

impl Needle {
    fn new(secret: &str) -> Self {
        let b = secret.as_bytes();
        let engines = [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        let mut whole: Vec<String> = engines.iter().map(|e| e.encode(b)).collect();
        // Inside a longer base64 text (a whole echoed request or JSON document encoded at
        // once), the secret, or its JSON-escaped form, starts at any of three byte alignments:
        // what only its bytes determine is the same wherever it stands.
        let escaped: String = secret.chars().map(|c| json_escape(c).map_or(c.to_string(), str::to_string)).collect();
        let serialized = serde_json::to_string(secret).unwrap_or_default();
        let serialized = serialized.trim_matches('"');
        for form in [b, escaped.as_bytes(), serialized.as_bytes()] {
            for engine in [&engines[1], &engines[3]] {
                for k in 0..3 {
                    whole.extend(embedded_base64(engine, form, k));
                }
            }
        }
        whole.push(hex::encode(b));
        whole.push(hex::encode_upper(b));
        whole.sort();
        whole.dedup();
        // Longest first, so a padded form is replaced whole before its unpadded prefix.
        whole.sort_by_key(|w| std::cmp::Reverse(w.len()));
        let chars: Vec<Vec<(String, bool)>> = secret.chars().map(forms).collect();
        let mut first = [false; 256];
        for (form, _) in chars.first().into_iter().flatten() {
            if let Some(&b) = form.as_bytes().first() {
                first[b.to_ascii_lowercase() as usize] = true;
                first[b.to_ascii_uppercase() as usize] = true;
            }
        }
        Needle { chars, whole, first }
    }

    /// Where a match starting at `at` ends, trying every mix of forms: the longest end of a
    /// whole match, or, when `to_end` allows it, a match of at least `MIN_CUT_PREFIX`
    /// characters that runs into the end of the text.
    fn match_at(&self, text: &[u8], at: usize, to_end: bool) -> Option<usize> {
        if !self.first[text[at] as usize] {
            return None;
        }
        let mut ends = vec![at];
        for (i, forms) in self.chars.iter().enumerate() {
            let mut next = Vec::new();
            for &p in &ends {
                for (form, fold) in forms {
                    if starts_with_form(&text[p..], form, *fold) && !next.contains(&(p + form.len())) {
                        next.push(p + form.len());
                    }
                }
            }
            if next.is_empty() {
                // The text ended inside the secret (a cut): a long enough beginning counts,
                // long in the secret's characters or in the text's.
                let at_end = ends.iter().any(|&p| p == text.len() || ends_in_partial_form(&text[p..], forms));
                let long = i >= MIN_CUT_PREFIX || text.len() - at >= MIN_CUT_PREFIX;
                return (to_end && long && at_end).then_some(text.len());
            }
            ends = next;
        }
        ends.into_iter().max()
    }
}

/// The base64 characters that only `bytes` determine when they follow `k` other bytes (0-2)
/// in a longer encoded text: none when that is too short to look for.
fn embedded_base64(engine: &base64::engine::GeneralPurpose, bytes: &[u8], k: usize) -> Option<String> {
    let mut padded = vec![0u8; k];
    padded.extend_from_slice(bytes);
    let enc = engine.encode(&padded);
    // A character stands for 6 bits: skip those that hold a bit of the k bytes before, stop
    // before any that holds a bit of what comes after.
    let (skip, end) = ((8 * k).div_ceil(6), 8 * padded.len() / 6);
    let middle = enc.get(skip..end)?;
    (middle.len() >= 2 * MIN_SECRET).then(|| middle.to_string())
}

/// True when `rest` is the beginning of one of the forms (an escape cut in the middle).
fn ends_in_partial_form(rest: &[u8], forms: &[(String, bool)]) -> bool {
    !rest.is_empty()
        && forms.iter().any(|(f, fold)| {
            let f = f.as_bytes();
            rest.len() < f.len()
                && if *fold { f[..rest.len()].eq_ignore_ascii_case(rest) } else { &f[..rest.len()] == rest }
        })
}

fn replace_whole(text: &str, whole: &[String]) -> String {
    let mut out = text.to_string();
    for w in whole {
        if w.len() >= MIN_SECRET && out.contains(w.as_str()) {
            out = out.replace(w.as_str(), MARK);
        }
    }
    out
}

fn scan(text: &str, needle: &Needle, cut: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        if let Some(end) = needle.match_at(bytes, i, cut) {
            out.push_str(&text[copied..i]);
            out.push_str(MARK);
            i = end;
            copied = end;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Replaces every occurrence of `secret` in `text`, in any of the encodings above. With
/// `cut`, the text was cut short, and a beginning of the secret at its very end is redacted
/// too.
pub fn redact(text: &str, secret: &str, cut: bool) -> String {
    Redactor::new(secret).redact(text, cut)
}

/// One secret's redaction, prepared once for every text of a response (its headers, its
/// body, an error message).
pub struct Redactor(Option<Needle>);

impl Redactor {
    /// Prepares the forms of `secret` (none when it is too short to look for).
    pub fn new(secret: &str) -> Self {
        Redactor((secret.chars().count() >= MIN_SECRET).then(|| Needle::new(secret)))
    }

    /// [`redact`] with the prepared forms.
    pub fn redact(&self, text: &str, cut: bool) -> String {
        match &self.0 {
            Some(needle) => redact_with(text, needle, cut),
            None => text.to_string(),
        }
    }
}

fn redact_with(text: &str, needle: &Needle, cut: bool) -> String {
    let text = replace_whole(text, &needle.whole);
    let mut out = scan(&text, needle, false);
    if cut {
        // Only a match that runs into the end can be a cut one; look at the tail alone.
        let longest = needle.chars.iter().map(|f| f.iter().map(|(s, _)| s.len()).max().unwrap_or(1)).sum::<usize>();
        let mut from = out.len().saturating_sub(longest);
        while !out.is_char_boundary(from) {
            from -= 1;
        }
        let tail = scan(&out[from..], needle, true);
        out.truncate(from);
        out.push_str(&tail);
        // A base64 or hex form cut short.
        for w in &needle.whole {
            for n in (MIN_CUT_PREFIX..w.len()).rev() {
                if out.ends_with(&w[..n]) {
                    let keep = out.len() - n;
                    out.truncate(keep);
                    out.push_str(MARK);
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRETS: [&str; 4] =
        ["s3cr3t-value-123", "p\"a/ss+w=o\\rd&<x>'y", "user:pa ss/wo+rd==", "ключ-секрет/+=\"42"];

    fn encodings(s: &str) -> Vec<String> {
        let pct_upper: String = s.bytes().map(|b| format!("%{b:02X}")).collect();
        let pct_lower: String = s.bytes().map(|b| format!("%{b:02x}")).collect();
        let form: String = s
            .bytes()
            .map(|b| match b {
                b' ' => "+".to_string(),
                b if b.is_ascii_alphanumeric() => (b as char).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect();
        let json = serde_json::to_string(s).unwrap_or_default();
        let json = json[1..json.len() - 1].to_string();
        let json_slash = json.replace('/', "\\/");
        let json_ascii: String = s
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_string() } else { format!("\\u{:04x}", c as u32) })
            .collect();
        let html = s
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;");
        let html_hex: String = s
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_string() } else { format!("&#x{:x};", c as u32) })
            .collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(s);
        let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        vec![
            s.to_string(),
            pct_upper,
            pct_lower,
            form,
            json,
            json_slash,
            json_ascii,
            html,
            html_hex,
            b64,
            b64url,
            hex::encode(s),
        ]
    }

    #[test]
    fn every_encoding_of_the_secret_is_redacted() {
        for secret in SECRETS {
            for (i, enc) in encodings(secret).into_iter().enumerate() {
                let text = format!("{{\"echo\": \"{enc}\", \"ok\": true}}");
                let out = redact(&text, secret, false);
                assert!(!out.contains(&enc), "encoding {i} of {secret:?} survived: {out}");
                assert!(out.contains(MARK) && out.contains("\"ok\": true"), "{out}");
            }
        }
    }

    #[test]
    fn a_beginning_of_the_secret_at_a_cut_is_redacted() {
        for secret in SECRETS {
            for enc in encodings(secret) {
                let chars: Vec<char> = enc.chars().collect();
                for keep in [12, chars.len() - 1] {
                    if keep >= chars.len() || keep < 12 {
                        continue;
                    }
                    let part: String = chars[..keep].iter().collect();
                    let text = format!("body then {part}");
                    let out = redact(&text, secret, true);
                    // Padding may stay behind ("[REDACTED]="): it tells nothing.
                    let rest = out.strip_prefix("body then ").unwrap_or("");
                    assert!(
                        rest.starts_with(MARK) && rest[MARK.len()..].chars().all(|c| c == '='),
                        "{secret:?} as {enc:?} cut at {keep}: {out}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_secret_inside_a_longer_base64_text_is_redacted_at_every_alignment() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        for secret in SECRETS {
            let escaped = serde_json::to_string(secret).unwrap_or_default();
            for (pad, engine) in
                [(0, STANDARD), (1, URL_SAFE_NO_PAD), (2, STANDARD), (4, URL_SAFE_NO_PAD), (5, STANDARD)]
            {
                // An echo service answering with the whole request, JSON and all, in base64.
                let doc = format!(
                    "{}{{\"headers\":{{\"authorization\":\"Bearer \" , \"token\":{escaped}}},\"n\":1}}",
                    "x".repeat(pad)
                );
                let text = engine.encode(doc.as_bytes());
                let out = redact(&text, secret, false);
                assert!(out.contains(MARK), "{secret} at {pad}: {out}");
                // No run of 8 characters that only the secret's bytes determine is left, for
                // the secret as it was sent or JSON-escaped, at any alignment.
                for form in [secret.as_bytes(), escaped.trim_matches('"').as_bytes()] {
                    for k in 0..3 {
                        let mut p = b"abc"[..k].to_vec();
                        p.extend_from_slice(form);
                        let enc = engine.encode(&p);
                        let region = &enc[(8 * k).div_ceil(6)..8 * p.len() / 6];
                        for w in region.as_bytes().windows(8) {
                            let w = std::str::from_utf8(w).unwrap_or_default();
                            assert!(!out.contains(w), "{secret} at {pad}, alignment {k}: `{w}` left in {out}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let text = "status ok; id=1234; {\"a\": \"b/c+d\"} &amp; 50% off";
        assert_eq!(redact(text, "s3cr3t-value-123", true), text);
        assert_eq!(redact("abc", "ab", false), "abc", "secrets this short are not looked for");
        // Not at the cut: a beginning of the secret in the middle stays.
        assert_eq!(redact("s3cr3t-v then more", "s3cr3t-value-123", true), "s3cr3t-v then more");
    }
}
