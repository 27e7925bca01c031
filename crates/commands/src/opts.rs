//! The options of a wrapper or runner (the table's `[wrapper.NAME]` and `[runner.NAME]`), read
//! as its own option parser reads them: `--` ends them; a short cluster (`-vs KILL`) is taken apart, an option in it that takes a value taking
//! the rest of the cluster or the next word; `--long=value` and `--long value`; a long option
//! abbreviated to a unique prefix of one it knows (`--sig` for `--signal`, as getopt_long
//! accepts). An option it does not know makes the command opaque: it could be one that runs
//! something, and no table can say which.

use crate::word::Word;

/// The options a program takes.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// Options that take no value (`-v`, `--verbose`).
    pub(crate) flags: Vec<String>,
    /// Options that take a value, joined or as the next word (`-s`, `--signal`).
    pub(crate) values: Vec<String>,
    /// Options whose value, if any, is joined to them only (`-e` or `-eEOF`, `--eof=EOF`).
    pub(crate) optional: Vec<String>,
    /// `-5` is an option (a number: `nice -5`).
    pub(crate) numeric: bool,
}

/// What the options were.
pub(crate) struct Read<'a> {
    /// Where the words after the options start.
    pub(crate) end: usize,
    /// Each option (its full name) with its value, when it took one (`None`: known only as
    /// the line runs).
    pub(crate) found: Vec<(&'a str, Option<Option<String>>)>,
}

impl Spec {
    /// Reads the table's words for a wrapper's options: `NAME` takes no value, `NAME=` takes
    /// one (joined or the next word), `NAME=?` takes one only joined to it.
    pub(crate) fn parse(text: &str, numeric: bool) -> Result<Spec, String> {
        let mut spec = Spec { numeric, ..Spec::default() };
        for token in text.split_whitespace() {
            let (name, list) = match token.split_once('=') {
                None => (token, &mut spec.flags),
                Some((n, "")) => (n, &mut spec.values),
                Some((n, "?")) => (n, &mut spec.optional),
                Some(_) => return Err(format!("`{token}`: a wrapper's option is `NAME`, `NAME=` or `NAME=?`")),
            };
            if !name.starts_with('-') || name.len() < 2 {
                return Err(format!("`{token}` is not an option"));
            }
            list.push(name.to_string());
        }
        Ok(spec)
    }

    /// Whether `o` is one of its options.
    pub(crate) fn has(&self, o: &str) -> bool {
        [&self.flags, &self.values, &self.optional].iter().any(|l| l.iter().any(|x| x == o))
    }

    fn known(&self, o: &str) -> Option<(&str, Kind)> {
        let lists = [(&self.flags, Kind::Flag), (&self.values, Kind::Value), (&self.optional, Kind::Optional)];
        for (list, kind) in lists {
            if let Some(x) = list.iter().find(|x| *x == o) {
                return Some((x.as_str(), kind));
            }
        }
        // A unique prefix of a long option.
        if o.starts_with("--") && o.len() > 3 {
            let mut hits = lists
                .iter()
                .flat_map(|(l, k)| l.iter().map(move |x| (x.as_str(), *k)))
                .filter(|(x, _)| x.starts_with("--") && x.starts_with(o));
            if let (Some(h), None) = (hits.next(), hits.next()) {
                return Some(h);
            }
        }
        None
    }

    /// Reads the options at the start of `args`; `Err` names an option it does not know, or a
    /// word known only as the line runs where an option may be.
    pub(crate) fn read(&self, args: &[Word]) -> Result<Read<'_>, String> {
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

    fn timeout() -> Spec {
        Spec::parse("-v --verbose --foreground --preserve-status -s= --signal= -k= --kill-after=", false)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(|w| Word::Lit(w.to_string())).collect()
    }

    #[test]
    fn clusters_values_and_abbreviations() {
        let timeout = timeout();
        let r = timeout.read(&words("-vs KILL 10 rm x")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 2);
        assert_eq!(r.found[1], ("-s", Some(Some("KILL".into()))));
        let r = timeout.read(&words("-sKILL 10 rm")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 1);
        let r = timeout.read(&words("--sig KILL --verb 10 rm")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 3);
        assert_eq!(r.found[0].0, "--signal");
        let r = timeout.read(&words("--signal=KILL -- 10")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.end, 2);
        assert!(timeout.read(&words("-x 10 rm")).is_err());
        assert!(timeout.read(&words("--nope 10 rm")).is_err());
        // Ambiguous: `--` followed by a prefix of two options.
        let two = Spec::parse("--alpha --also", false).unwrap_or_else(|e| panic!("{e}"));
        assert!(two.read(&words("--al x")).is_err());
        assert!(Spec::parse("-x=path", false).is_err() && Spec::parse("x", false).is_err());
    }
}
