//! A simple command read: its words, its assignments, its redirections (files written, files
//! read, here-documents given as input).

use super::Walker;
use crate::Redirect;
use crate::word::Word;
use brush_parser::ast;

impl Walker<'_> {
    pub(super) fn redirect(&mut self, io: &ast::IoRedirect, depth: usize, reads: &mut Vec<Word>) {
        match io {
            ast::IoRedirect::File(_, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(w) => {
                    let word = self.word(&w.value, depth);
                    let writes = matches!(
                        kind,
                        ast::IoFileRedirectKind::Write
                            | ast::IoFileRedirectKind::Append
                            | ast::IoFileRedirectKind::Clobber
                            | ast::IoFileRedirectKind::ReadAndWrite
                    );
                    if writes {
                        self.write_redirect(&word);
                    } else {
                        reads.push(word);
                    }
                }
                ast::IoFileRedirectTarget::Fd(_) => {}
                ast::IoFileRedirectTarget::Duplicate(w) => {
                    let word = self.word(&w.value, depth);
                    let is_fd = word
                        .lit()
                        .is_some_and(|s| s == "-" || s.trim_end_matches('-').chars().all(|c| c.is_ascii_digit()));
                    if !is_fd {
                        // `>&file` writes the file.
                        self.write_redirect(&word);
                    }
                }
                ast::IoFileRedirectTarget::ProcessSubstitution(_, s) => {
                    self.line.complex = true;
                    let saved = self.cwd.clone();
                    self.compound_list(&s.list, depth);
                    self.cwd = saved;
                }
            },
            ast::IoRedirect::HereDocument(_, h) => {
                // An end marker other than a plain word, or one in plain quotes, is one bash may
                // end where this reading does not (`<<$'a'`, a backslash-newline in it): what
                // follows could be commands.
                let end = h.here_end.value.as_str();
                let bare = end
                    .strip_prefix('\'')
                    .and_then(|e| e.strip_suffix('\''))
                    .or_else(|| end.strip_prefix('"').and_then(|e| e.strip_suffix('"')))
                    .or_else(|| end.strip_prefix('\\'))
                    .unwrap_or(end);
                if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) {
                    self.opaque("a here-document whose end marker is not a plain word");
                }
                if h.requires_expansion {
                    let opts = brush_parser::ParserOptions::default();
                    match brush_parser::word::parse_heredoc(&h.doc.value, &opts) {
                        Ok(pieces) => {
                            for p in pieces {
                                if let brush_parser::word::WordPiece::CommandSubstitution(s)
                                | brush_parser::word::WordPiece::BackquotedCommandSubstitution(s) = p.piece
                                {
                                    self.line.complex = true;
                                    self.script(&s, depth + 1);
                                } else if let brush_parser::word::WordPiece::ParameterExpansion(_) = p.piece {
                                    let t = h.doc.value.get(p.start_index..p.end_index).unwrap_or("");
                                    if t.contains("$(") || t.contains('`') {
                                        self.opaque("a command substitution inside an expansion in a here-document");
                                    }
                                }
                            }
                        }
                        Err(_) => self.opaque("a here-document that does not parse"),
                    }
                }
                self.stdin = Some(if h.requires_expansion { None } else { Some(h.doc.value.clone()) });
            }
            ast::IoRedirect::HereString(_, w) => {
                let word = self.word(&w.value, depth);
                self.stdin = Some(word.lit().map(str::to_string));
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let word = self.word(&w.value, depth);
                self.write_redirect(&word);
            }
        }
    }

    pub(super) fn write_redirect(&mut self, w: &Word) {
        const HARMLESS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];
        if w.lit().is_some_and(|s| HARMLESS.contains(&s)) {
            return;
        }
        let p = self.path_of(w);
        self.line.redirects.push(Redirect { path: p, target: w.text().to_string() });
    }

    pub(super) fn simple(&mut self, s: &ast::SimpleCommand, depth: usize) {
        let mut words: Vec<Word> = Vec::new();
        let mut env: Vec<String> = Vec::new();
        let mut reads: Vec<Word> = Vec::new();
        self.stdin = None;
        let items = s.prefix.iter().flat_map(|p| p.0.iter());
        for item in items {
            self.item(item, depth, &mut words, &mut env, &mut reads);
        }
        if let Some(w) = &s.word_or_name {
            let word = self.word(&w.value, depth);
            words.push(word);
        }
        for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
            self.item(item, depth, &mut words, &mut env, &mut reads);
        }
        if words.is_empty() {
            // Assignments alone: they change what later commands do when they name programs.
            for name in &env {
                if self.table.changes_programs(name) {
                    self.opaque(format!("`{name}` is set, which changes what later commands run"));
                }
            }
            return;
        }
        let stdin = self.stdin.take();
        self.run(words, env, super::run::Through { reads, depth, stdin, ..Default::default() });
    }

    pub(super) fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        depth: usize,
        words: &mut Vec<Word>,
        env: &mut Vec<String>,
        reads: &mut Vec<Word>,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(io) => self.redirect(io, depth, reads),
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                let word = self.word(&w.value, depth);
                words.push(word);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if words.is_empty() {
                    let name = match &a.name {
                        ast::AssignmentName::VariableName(n) | ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                    };
                    match &a.value {
                        ast::AssignmentValue::Scalar(v) => {
                            self.word(&v.value, depth);
                        }
                        ast::AssignmentValue::Array(vs) => {
                            for (k, v) in vs {
                                if let Some(k) = k {
                                    self.word(&k.value, depth);
                                }
                                self.word(&v.value, depth);
                            }
                        }
                    }
                    env.push(name);
                } else {
                    // `declare x=1`, `export PATH=…`: an argument of the command.
                    let word = self.word(&w.value, depth);
                    words.push(word);
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, s) => {
                self.line.complex = true;
                let saved = self.cwd.clone();
                self.compound_list(&s.list, depth);
                self.cwd = saved;
                words.push(Word::Unknown("<(…)".into()));
            }
        }
    }
}
