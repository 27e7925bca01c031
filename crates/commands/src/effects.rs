//! What a command does, as a set of effects: the vocabulary of the program table and of rules'
//! coverage ("words after an allowed prefix may not raise what the command does").

use std::fmt;

/// A set of effects. Each is something a person would want to be asked about on its own: a
/// rule that allows one never allows another by accident.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Effects(u16);

macro_rules! effects {
    ($($(#[$doc:meta])* $name:ident = $bit:expr, $word:literal;)*) => {
        impl Effects {
            $($(#[$doc])* pub const $name: Effects = Effects(1 << $bit);)*
            /// Every effect with its word, in order.
            pub const ALL: &'static [(Effects, &'static str)] = &[$((Effects::$name, $word)),*];
        }
    };
}

effects! {
    /// Reads files or state.
    READ = 0, "read";
    /// Writes files: the working folder's (a build's output) or files it names.
    WRITE = 1, "write";
    /// Deletes files, branches, refs, resources.
    DELETE = 2, "delete";
    /// Forces, overwrites or rewrites (`--force`, `+refspec`, `--hard`, `--amend`, `-f`).
    FORCE = 3, "force";
    /// Reaches the network.
    NETWORK = 4, "network";
    /// Publishes or changes something shared (a push, a release, a deployment).
    PUBLISH = 5, "publish";
    /// Runs code it was not shown (a project's scripts, a package, an interpreter's program).
    EXEC = 6, "exec";
    /// Runs with more privilege (`sudo`, `doas`).
    PRIVILEGE = 7, "privilege";
    /// Acts on another folder or repository than the one it runs in (`git -C`, `--git-dir`).
    RELOCATE = 8, "relocate";
    /// Runs with a changed environment (`FOO=1 cmd`, `env FOO=1 cmd`).
    ENV = 9, "env";
    /// An option or form the table does not know: it could do anything.
    UNKNOWN = 10, "unknown";
}

impl Effects {
    /// No effect at all (`true`, `echo`).
    pub const NONE: Effects = Effects(0);

    /// Both sets.
    pub const fn union(self, other: Effects) -> Effects {
        Effects(self.0 | other.0)
    }

    /// Whether every effect of `self` is in `other`.
    pub const fn within(self, other: Effects) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether any effect of `other` is in `self`.
    pub const fn any(self, other: Effects) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether it has no effect.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether it only reads (or does nothing).
    pub const fn only_reads(self) -> bool {
        self.within(Effects::READ)
    }

    /// Its effects less those of `other`.
    pub const fn minus(self, other: Effects) -> Effects {
        Effects(self.0 & !other.0)
    }

    /// Parses `read+write`, `network publish` (either separator).
    pub fn parse(s: &str) -> Result<Effects, String> {
        let mut e = Effects::NONE;
        for w in s.split(['+', ' ', ',']).filter(|w| !w.is_empty()) {
            let found = Effects::ALL.iter().find(|(_, name)| *name == w).ok_or_else(|| format!("no effect `{w}`"))?;
            e = e.union(found.0);
        }
        Ok(e)
    }

    /// The words of its effects.
    pub fn words(self) -> Vec<&'static str> {
        Effects::ALL.iter().filter(|(e, _)| self.any(*e)).map(|(_, w)| *w).collect()
    }
}

impl std::ops::BitOr for Effects {
    type Output = Effects;
    fn bitor(self, rhs: Effects) -> Effects {
        self.union(rhs)
    }
}

impl std::ops::BitOrAssign for Effects {
    fn bitor_assign(&mut self, rhs: Effects) {
        *self = self.union(rhs);
    }
}

impl fmt::Display for Effects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("nothing");
        }
        f.write_str(&self.words().join("+"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets() {
        let rw = Effects::parse("read+write").unwrap_or_default();
        assert!(Effects::READ.within(rw));
        assert!(!rw.within(Effects::READ));
        assert!(Effects::NONE.only_reads());
        assert_eq!(rw.to_string(), "read+write");
        assert!(Effects::parse("read+teleport").is_err());
        assert_eq!(rw.minus(Effects::READ), Effects::WRITE);
    }
}
