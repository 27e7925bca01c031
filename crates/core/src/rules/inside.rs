//! Whether one rule lies inside another: everything it matches, the other matches too. When
//! rules disagree on a proposal, an allow wins over a deny or an ask only when it lies strictly
//! inside each of them (the person carved an exception out of a broader "no"), and among
//! denies and asks the narrowest decides (`set.rs`).

use super::compiled::Compiled;
use super::patterns::{has_wildcard, literal_prefix};
use globset::GlobMatcher;

impl Compiled {
    /// Whether everything it covers lies inside what `other` covers (for an allow against a
    /// deny or ask). Conservative: false when it cannot tell.
    pub(super) fn inside(&self, other: &Compiled) -> bool {
        // The built-in rule is the broadest allow: it never lies inside a deny or ask.
        if self.is_builtin() || other.is_builtin() {
            return false;
        }
        let same = |a: &Option<String>, b: &Option<String>| {
            b.is_none() || a.as_deref().zip(b.as_deref()).is_some_and(|(x, y)| x.eq_ignore_ascii_case(y))
        };
        let glob_in = |mine: &Option<String>, theirs: &Option<GlobMatcher>, theirs_src: &Option<String>| match theirs {
            None => true,
            Some(g) => mine.as_deref().is_some_and(|m| {
                Some(m) == theirs_src.as_deref()
                    || (!has_wildcard(m) && g.is_match(m))
                    || theirs_src.as_deref().and_then(|t| t.strip_suffix("/**")).is_some_and(|d| {
                        let lit = literal_prefix(m);
                        lit.starts_with(&format!("{d}/")) && !m.contains("..")
                    })
            }),
        };
        let input_in = match (&other.prefix, &other.m.exact) {
            (None, false) => true,
            (None, true) => self.m.exact && self.m.input == other.m.input,
            (Some(theirs), _) => {
                if let Some(line) = &self.exact_line {
                    !line.commands.is_empty() && line.commands.iter().all(|c| theirs.matches(c))
                } else {
                    self.prefix.as_ref().is_some_and(|mine| {
                        !theirs.wrapper
                            && !mine.wrapper
                            && mine.words.len() >= theirs.words.len()
                            && mine.words.iter().zip(&theirs.words).all(|(a, b)| a == b)
                    })
                }
            }
        };
        same(&self.m.agent, &other.m.agent)
            && same(&self.m.kind, &other.m.kind)
            && same(&self.m.method, &other.m.method)
            && same(&self.m.host, &other.m.host)
            && same(&self.m.credential, &other.m.credential)
            && glob_in(&self.m.tool, &other.tool_m, &other.m.tool)
            && glob_in(&self.path_abs, &other.path_m, &other.path_abs)
            && self.relative == other.relative
            && input_in
    }
}
