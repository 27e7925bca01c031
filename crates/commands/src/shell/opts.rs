//! The options of a wrapper or runner, read as its own option parser reads them: `--` ends
//! them; a short cluster (`-vs KILL`) is taken apart, an option in it that takes a value taking
//! the rest of the cluster or the next word; `--long=value` and `--long value`; a long option
//! abbreviated to a unique prefix of one it knows (`--sig` for `--signal`, as getopt_long
//! accepts). An option it does not know makes the command opaque: it could be one that runs
//! something, and no table can say which.

use crate::word::Word;

/// The options a program takes.
pub(crate) struct Spec {
    /// Options that take no value (`-v`, `--verbose`).
    pub(crate) flags: &'static [&'static str],
    /// Options that take a value, joined or as the next word (`-s`, `--signal`).
    pub(crate) values: &'static [&'static str],
    /// Options whose value, if any, is joined to them only (`-e` or `-eEOF`, `--eof=EOF`).
    pub(crate) optional: &'static [&'static str],
    /// `-5` is an option (a number: `nice -5`).
    pub(crate) numeric: bool,
}

/// What the options were.
pub(crate) struct Read {
    /// Where the words after the options start.
    pub(crate) end: usize,
    /// Each option (its full name) with its value, when it took one (`None`: known only as
    /// the line runs).
    pub(crate) found: Vec<(&'static str, Option<Option<String>>)>,
}

impl Spec {
    fn known(&self, o: &str) -> Option<(&'static str, Kind)> {
        let lists = [(self.flags, Kind::Flag), (self.values, Kind::Value), (self.optional, Kind::Optional)];
        for (list, kind) in lists {
            if let Some(x) = list.iter().find(|x| **x == o) {
                return Some((x, kind));
            }
        }
        // A unique prefix of a long option.
        if o.starts_with("--") && o.len() > 3 {
            let mut hits = lists
                .iter()
                .flat_map(|(l, k)| l.iter().map(move |x| (*x, *k)))
                .filter(|(x, _)| x.starts_with("--") && x.starts_with(o));
            if let (Some(h), None) = (hits.next(), hits.next()) {
                return Some(h);
            }
        }
        None
    }

    /// Reads the options at the start of `args`; `Err` names an option it does not know, or a
    /// word known only as the line runs where an option may be.
    pub(crate) fn read(&self, args: &[Word]) -> Result<Read, String> {
        let mut found = Vec::new();
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                return Err("a word known only when the line runs".into());
            };
            if s == "--" {
                i += 1;
                break;
            }
            if !s.starts_with('-') || s.len() == 1 {
                break;
            }
            i += 1;
            if self.numeric && s[1..].chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            if let Some(long) = s.strip_prefix("--") {
                let (name, joined) = match long.split_once('=') {
                    Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                    None => (s.to_string(), None),
                };
                let (o, kind) = self.known(&name).ok_or_else(|| format!("the option `{name}`"))?;
                let value = match (kind, joined) {
                    (Kind::Flag, Some(_)) => return Err(format!("the option `{name}` with a value")),
                    (Kind::Flag, None) => None,
                    (_, Some(v)) => Some(Some(v)),
                    (Kind::Optional, None) => None,
                    (Kind::Value, None) => {
                        i += 1;
                        Some(args.get(i - 1).map(|w| w.lit().map(str::to_string)).unwrap_or(None))
                    }
                };
                found.push((o, value));
                continue;
            }
            // A short cluster.
            let chars: Vec<char> = s[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let o = format!("-{}", chars[k]);
                let (name, kind) = self.known(&o).ok_or_else(|| format!("the option `{o}` (in `{s}`)"))?;
                k += 1;
                let rest: String = chars[k..].iter().collect();
                match kind {
                    Kind::Flag => found.push((name, None)),
                    Kind::Optional => {
                        found.push((name, (!rest.is_empty()).then(|| Some(rest.clone()))));
                        break;
                    }
                    Kind::Value if !rest.is_empty() => {
                        found.push((name, Some(Some(rest))));
                        break;
                    }
                    Kind::Value => {
                        i += 1;
                        found.push((name, Some(args.get(i - 1).map(|w| w.lit().map(str::to_string)).unwrap_or(None))));
                        break;
                    }
                }
            }
        }
        Ok(Read { end: i, found })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Value,
    Optional,
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Spec = Spec {
        flags: &["-v", "--verbose", "--foreground", "--preserve-status"],
        values: &["-s", "--signal", "-k", "--kill-after"],
        optional: &[],
        numeric: false,
    };

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(|w| Word::Lit(w.to_string())).collect()
    }

    #[test]
    fn clusters_values_and_abbreviations() {
        let r = TIMEOUT.read(&words("-vs KILL 10 rm x")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 2);
        assert_eq!(r.found[1], ("-s", Some(Some("KILL".into()))));
        let r = TIMEOUT.read(&words("-sKILL 10 rm")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 1);
        let r = TIMEOUT.read(&words("--sig KILL --verb 10 rm")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 3);
        assert_eq!(r.found[0].0, "--signal");
        let r = TIMEOUT.read(&words("--signal=KILL -- 10")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 2);
        assert!(TIMEOUT.read(&words("-x 10 rm")).is_err());
        assert!(TIMEOUT.read(&words("--nope 10 rm")).is_err());
        // Ambiguous: `--` followed by a prefix of two options.
        let two = Spec { flags: &["--alpha", "--also"], values: &[], optional: &[], numeric: false };
        assert!(two.read(&words("--al x")).is_err());
    }
}
