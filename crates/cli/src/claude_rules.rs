//! Claude Code's permission rules (`permissions.allow`, `.deny`, `.ask` of a settings file) as
//! Assent rules. Claude Code's hooks file each tool call as a `tool.call` with Claude Code's
//! tool name and input, so a rule maps to a tool name glob, a command prefix (Bash) and a path
//! glob (Read, Edit). An entry that Assent cannot express with the same meaning is refused,
//! with the reason: the import never widens what an `allow` allows nor narrows what a `deny`
//! refuses.

use assent_core::rules::{Effect, RuleMatch};
use std::path::{Path, PathBuf};

/// Where a settings file's `/path` patterns are anchored, and its `path` patterns resolved.
#[derive(Debug, Clone)]
pub struct Anchors {
    /// `/path`: the project root for project settings, `~/.claude` for user settings, the
    /// file's folder for any other file.
    pub slash: PathBuf,
    /// `path` and `./path`: Claude Code resolves them against the folder it runs in, which is
    /// the project root for project settings; none for user settings (it could be anywhere).
    pub relative: Option<PathBuf>,
    /// `~`.
    pub home: PathBuf,
}

impl Anchors {
    /// The anchors of a settings file, from where it is.
    pub fn of(file: &Path, home: &Path) -> Anchors {
        let file = file.to_path_buf();
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let user = home.join(".claude");
        if dir == user {
            return Anchors { slash: user, relative: None, home: home.to_path_buf() };
        }
        if dir.file_name().is_some_and(|n| n == ".claude") {
            let root = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            return Anchors { slash: root.clone(), relative: Some(root), home: home.to_path_buf() };
        }
        Anchors { slash: dir.clone(), relative: Some(dir), home: home.to_path_buf() }
    }
}

/// One entry of a settings file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// It becomes this rule.
    Rule {
        /// The entry as written.
        source: String,
        /// The effect.
        effect: Effect,
        /// The match.
        matches: RuleMatch,
    },
    /// It cannot be expressed faithfully.
    Refused {
        /// The entry as written.
        source: String,
        /// The list it came from.
        effect: Effect,
        /// Why.
        why: String,
    },
}

/// Reads the three lists of a settings file.
pub fn read(settings: &serde_json::Value, anchors: &Anchors) -> Result<Vec<Entry>, String> {
    let perms = settings.get("permissions").ok_or("the file has no `permissions`")?;
    let mut out = Vec::new();
    for (list, effect) in [("deny", Effect::Deny), ("ask", Effect::Ask), ("allow", Effect::Allow)] {
        let Some(v) = perms.get(list) else { continue };
        let items = v.as_array().ok_or_else(|| format!("`permissions.{list}` is not a list"))?;
        for item in items {
            match item.as_str() {
                Some(s) => out.push(entry(s, effect, anchors)),
                None => out.push(Entry::Refused { source: item.to_string(), effect, why: "not a string".into() }),
            }
        }
    }
    Ok(out)
}

fn tool_call(tool: &str) -> RuleMatch {
    RuleMatch {
        kind: Some(assent_core::payloads::KindName::ToolCall.as_str().into()),
        tool: Some(tool.into()),
        ..Default::default()
    }
}

/// Splits `Tool(specifier)`, undoing `\(`, `\)` and `\\` in the specifier.
fn split(rule: &str) -> Result<(String, Option<String>), String> {
    let rule = rule.trim();
    if !rule.contains(['(', ')']) {
        return Ok((rule.to_string(), None));
    }
    let open = rule.find('(').ok_or("malformed: a `)` without a `(`")?;
    if !rule.ends_with(')') {
        return Err("malformed: the specifier must end the rule with `)`".into());
    }
    let name = &rule[..open];
    if name.contains(')') || name.is_empty() {
        return Err("malformed tool name".into());
    }
    let raw = &rule[open + 1..rule.len() - 1];
    let mut spec = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('(' | ')' | '\\')) {
            spec.push(chars.next().unwrap_or('\\'));
        } else {
            spec.push(c);
        }
    }
    let spec = spec.trim().to_string();
    Ok((name.to_string(), if spec.is_empty() || spec == "*" { None } else { Some(spec) }))
}

/// The tools a Claude Code rule name covers: `Read` rules also apply to Grep and Glob, `Edit`
/// rules to Write and NotebookEdit; `Task` is the old name of `Agent`.
fn tools_of(name: &str, effect: Effect, with_path: bool) -> String {
    match name {
        // A Read deny also blocks editing and writing the same path.
        "Read" if effect != Effect::Allow && with_path => "{Read,Grep,Glob,Edit,Write}".into(),
        "Read" => "{Read,Grep,Glob}".into(),
        // An Edit allow also grants reading the same path.
        "Edit" if effect == Effect::Allow && with_path => "{Edit,Write,NotebookEdit,Read,Grep,Glob}".into(),
        "Edit" => "{Edit,Write,NotebookEdit}".into(),
        "Task" | "Agent" => "{Agent,Task}".into(),
        other => other.to_string(),
    }
}

fn entry(source: &str, effect: Effect, anchors: &Anchors) -> Entry {
    let refuse = |why: &str| Entry::Refused { source: source.to_string(), effect, why: why.to_string() };
    let (name, spec) = match split(source) {
        Ok(x) => x,
        Err(e) => return refuse(&e),
    };
    let rule = |matches: RuleMatch| Entry::Rule { source: source.to_string(), effect, matches };
    let is_glob = name.contains(['*', '?', '[', '{']);
    if is_glob {
        if spec.is_some() {
            return refuse("a tool-name glob takes no specifier");
        }
        // Claude Code skips an allow glob that is not anchored after `mcp__<server>__`.
        let anchored = name
            .strip_prefix("mcp__")
            .and_then(|r| r.split_once("__"))
            .is_some_and(|(server, _)| !server.is_empty() && !server.contains(['*', '?', '[', '{']));
        if effect == Effect::Allow && !anchored {
            return refuse("Claude Code ignores an allow glob that is not anchored after `mcp__<server>__`");
        }
        return rule(tool_call(&name));
    }
    if let Some(server) = name.strip_prefix("mcp__") {
        if spec.is_some() {
            return refuse("an MCP rule takes no specifier");
        }
        if server.is_empty() {
            return refuse("an MCP rule names a server");
        }
        // `mcp__server` is every tool of that server.
        let glob = if server.contains("__") { name.clone() } else { format!("{name}__*") };
        return rule(tool_call(&glob));
    }
    let Some(spec) = spec else {
        if name == "Cd" {
            return refuse("`Cd` controls Claude Code's /cd command, not a tool an agent calls");
        }
        if name == "Bash" && effect == Effect::Allow {
            // Every command: run confined to the folder, as any imported command allow is.
            let confine = Some(assent_core::rules::Confine::Workspace);
            return rule(RuleMatch { confine, ..tool_call("Bash") });
        }
        return rule(tool_call(&tools_of(&name, effect, false)));
    };
    match name.as_str() {
        "Bash" => bash(&spec, effect, anchors.relative.as_deref()).map_or_else(|why| refuse(&why), rule),
        "Read" | "Edit" => match path(&spec, effect, anchors) {
            Ok(glob) => rule(RuleMatch { path: Some(glob), ..tool_call(&tools_of(&name, effect, true)) }),
            Err(why) => refuse(&why),
        },
        "Write" | "Glob" | "NotebookEdit" | "MultiEdit" => refuse(
            "Claude Code accepts a path rule for this tool but never consults it (path rules are `Read` and `Edit`)",
        ),
        "WebFetch" => match spec.strip_prefix("domain:").map(str::trim) {
            Some(d) if !d.is_empty() && !d.contains(['*', '/', ':']) => {
                let host = d.trim_end_matches('.').to_ascii_lowercase();
                rule(RuleMatch { host: Some(host), ..tool_call("WebFetch") })
            }
            Some(_) => refuse("a domain wildcard: Assent matches one host exactly"),
            None => refuse("WebFetch rules are `WebFetch(domain:HOST)`"),
        },
        "PowerShell" => refuse("PowerShell rules match commands case-insensitively; Assent's command prefix is exact"),
        "Cd" => refuse("`Cd` controls Claude Code's /cd command, not a tool an agent calls"),
        _ if spec.contains(':') => {
            refuse("a `Tool(param:value)` rule matches an input field, which Assent's rules do not")
        }
        _ => refuse("this tool's specifier has no Assent equivalent"),
    }
}

/// `Bash(npm run test:*)` and `Bash(npm run test *)` are the command prefix `npm run test`.
fn bash(spec: &str, effect: Effect, project: Option<&Path>) -> Result<RuleMatch, String> {
    let prefix = if let Some(p) = spec.strip_suffix(":*") {
        if p.contains('*') {
            return Err("a `*` before the trailing `:*`".into());
        }
        p
    } else if let Some(p) = spec.strip_suffix(" *")
        && !p.contains('*')
    {
        p
    } else if spec.contains('*') {
        return Err("a `*` inside a command matches any text there; Assent matches a command's leading words".into());
    } else {
        return Err(format!(
            "an exact command; Assent matches a command's leading words, so it would also {} `{spec}` with more arguments (write `Bash({spec}:*)` if that is meant)",
            if effect == Effect::Allow { "allow" } else { "match" }
        ));
    };
    // Claude Code's prefix, read as Assent reads a prefix: an allow covers commands whose
    // further words do not raise what the prefix does, every part of a compound command must
    // be allowed, and a redirection to a file needs a rule that allows writing it, so the
    // rule is never wider than Claude Code's own.
    let parsed = assent_commands::Prefix::parse(prefix.trim())
        .map_err(|e| format!("not a command prefix Assent can read: {}", e.0))?;
    // An imported allow runs what it allows confined by the kernel (`read` for a prefix that
    // only reads, `workspace` for any other), never as the agent's text says: one that needs
    // the network or privileges is the person's to write, unconfined, knowing it.
    let confine = match effect {
        Effect::Allow => Some(assent_core::rules::confinement_for(parsed.effects)?),
        _ => None,
    };
    // Claude Code asks before a command reads or writes outside the session's working
    // folders, whatever the allow says: so does the imported allow (`./**`).
    let path = (effect == Effect::Allow).then(|| "./**".to_string());
    // An allow of a project script (`npm run test`, `make`) pins its definition in the
    // project the settings belong to, as it is now: changed, the rule asks again.
    let words: Vec<&str> = parsed.words.iter().map(String::as_str).collect();
    let script = project.filter(|_| effect == Effect::Allow).and_then(|p| assent_core::rules::scripts::pin(&words, p));
    Ok(RuleMatch { input: Some(prefix.trim().to_string()), path, confine, script, ..tool_call("Bash") })
}

/// A gitignore-style path pattern as an absolute path glob.
fn path(spec: &str, effect: Effect, a: &Anchors) -> Result<String, String> {
    if spec.starts_with('!') {
        return Err("a negated pattern".into());
    }
    if spec.ends_with('/') {
        return Err("a folder-only pattern (ending in `/`)".into());
    }
    let join = |base: &Path, rest: &str| {
        // A rule's glob has `/` between names on every platform (Windows writes `\\`).
        let base = base.display().to_string();
        let base = if cfg!(windows) { base.replace('\\', "/") } else { base };
        format!("{}/{}", base.trim_end_matches('/'), rest)
    };
    if let Some(abs) = spec.strip_prefix("//") {
        return Ok(format!("/{abs}"));
    }
    if let Some(rest) = spec.strip_prefix("~/") {
        return Ok(join(&a.home, rest));
    }
    if let Some(rest) = spec.strip_prefix('/') {
        return Ok(join(&a.slash, rest));
    }
    let rest = spec.strip_prefix("./").unwrap_or(spec);
    let base = a.relative.as_ref().ok_or(
        "a relative pattern in user settings applies wherever Claude Code runs; Assent needs a folder (write `//abs/path` or `~/path`)",
    )?;
    let inner = rest.trim_end_matches("/**");
    // A bare name matches at any depth; a single folder with `/**` does too for deny and ask
    // (for allow it is anchored at the folder Claude Code runs in).
    let any_depth = !rest.contains('/') || (!inner.contains('/') && rest.ends_with("/**") && effect != Effect::Allow);
    Ok(if any_depth { join(base, &format!("**/{rest}")) } else { join(base, rest) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors() -> Anchors {
        Anchors::of(Path::new("/w/proj/.claude/settings.json"), Path::new("/home/u"))
    }

    fn one(s: &str, effect: Effect) -> Entry {
        entry(s, effect, &anchors())
    }

    fn m(s: &str, effect: Effect) -> RuleMatch {
        match one(s, effect) {
            Entry::Rule { matches, .. } => matches,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn refused(s: &str, effect: Effect) -> bool {
        matches!(one(s, effect), Entry::Refused { .. })
    }

    #[test]
    fn bash_prefixes_become_command_prefixes_and_the_rest_is_refused() {
        assert_eq!(m("Bash(npm run test:*)", Effect::Allow).input.as_deref(), Some("npm run test"));
        assert_eq!(m("Bash(git status *)", Effect::Allow).input.as_deref(), Some("git status"));
        assert_eq!(m("Bash", Effect::Allow).tool.as_deref(), Some("Bash"));
        // An imported allow runs confined: reads under `read`, the rest under `workspace`;
        // one that needs the network is refused, with why; deny and ask confine nothing.
        use assent_core::rules::Confine;
        assert_eq!(m("Bash", Effect::Allow).confine, Some(Confine::Workspace));
        assert_eq!(m("Bash(git status:*)", Effect::Allow).confine, Some(Confine::Read));
        assert_eq!(m("Bash(npm run test:*)", Effect::Allow).confine, Some(Confine::Workspace));
        assert_eq!(m("Bash(git commit:*)", Effect::Allow).confine, Some(Confine::Workspace));
        assert_eq!(m("Bash(git push:*)", Effect::Deny).confine, None);
        for net in ["Bash(git push:*)", "Bash(npm publish:*)", "Bash(curl:*)", "Bash(sudo apt-get:*)"] {
            assert!(refused(net, Effect::Allow), "{net}");
        }
        assert_eq!(m("Bash(*)", Effect::Deny), tool_call("Bash"));
        for (rule, effect) in [
            ("Bash(npm run build)", Effect::Allow),
            ("Bash(git * main)", Effect::Allow),
            ("Bash(* --version)", Effect::Deny),
            ("Bash(ls*)", Effect::Allow),
            ("Bash(a && b:*)", Effect::Allow),
        ] {
            assert!(refused(rule, effect), "{rule}");
        }
    }

    #[test]
    fn paths_are_anchored_as_claude_code_anchors_them() {
        let p = |s: &str, e: Effect| m(s, e).path.unwrap_or_default();
        assert_eq!(p("Read(//etc/passwd)", Effect::Deny), "/etc/passwd");
        assert_eq!(p("Read(~/.aws/**)", Effect::Deny), "/home/u/.aws/**");
        assert_eq!(p("Edit(/src/**/*.ts)", Effect::Allow), "/w/proj/src/**/*.ts");
        assert_eq!(p("Read(./.env)", Effect::Deny), "/w/proj/**/.env");
        assert_eq!(p("Read(*.env)", Effect::Deny), "/w/proj/**/*.env");
        assert_eq!(p("Edit(src/**)", Effect::Allow), "/w/proj/src/**");
        assert_eq!(p("Read(secrets/**)", Effect::Deny), "/w/proj/**/secrets/**");
        assert_eq!(p("Edit(src/components/**)", Effect::Deny), "/w/proj/src/components/**");
        assert_eq!(m("Read(./src/**)", Effect::Allow).tool.as_deref(), Some("{Read,Grep,Glob}"));
        assert_eq!(m("Read(.env)", Effect::Deny).tool.as_deref(), Some("{Read,Grep,Glob,Edit,Write}"));
        assert!(refused("Write(/src/**)", Effect::Allow));
        assert!(refused("Read(!x)", Effect::Deny));
        let user = Anchors::of(Path::new("/home/u/.claude/settings.json"), Path::new("/home/u"));
        assert!(matches!(entry("Read(src/**)", Effect::Allow, &user), Entry::Refused { .. }));
        match entry("Read(/notes/**)", Effect::Allow, &user) {
            Entry::Rule { matches, .. } => assert_eq!(matches.path.as_deref(), Some("/home/u/.claude/notes/**")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mcp_web_and_other_tools() {
        assert_eq!(m("mcp__github", Effect::Allow).tool.as_deref(), Some("mcp__github__*"));
        assert_eq!(m("mcp__github__*", Effect::Allow).tool.as_deref(), Some("mcp__github__*"));
        assert_eq!(m("mcp__github__get_issue", Effect::Allow).tool.as_deref(), Some("mcp__github__get_issue"));
        assert_eq!(m("mcp__*", Effect::Deny).tool.as_deref(), Some("mcp__*"));
        assert!(refused("mcp__*", Effect::Allow), "an unanchored allow glob");
        assert!(refused("*", Effect::Allow));
        assert_eq!(m("*", Effect::Ask).tool.as_deref(), Some("*"));
        let web = m("WebFetch(domain:Example.com)", Effect::Allow);
        assert_eq!((web.tool.as_deref(), web.host.as_deref()), (Some("WebFetch"), Some("example.com")));
        assert_eq!(m("Task", Effect::Deny).tool.as_deref(), Some("{Agent,Task}"));
        for (rule, effect) in [
            ("WebFetch(domain:*.example.com)", Effect::Allow),
            ("Agent(model:opus)", Effect::Deny),
            ("Agent(Explore)", Effect::Deny),
            ("Cd(/tmp)", Effect::Allow),
            ("PowerShell(Get-ChildItem *)", Effect::Allow),
            ("Bash(oops", Effect::Allow),
        ] {
            assert!(refused(rule, effect), "{rule}");
        }
    }

    #[test]
    fn a_settings_file_is_read_list_by_list() {
        let v = serde_json::json!({"permissions": {"allow": ["Bash(npm test:*)", 3], "deny": ["Read(./.env)"], "defaultMode": "default"}});
        let entries = read(&v, &anchors()).unwrap_or_default();
        assert_eq!(entries.len(), 3);
        assert!(matches!(&entries[0], Entry::Rule { effect: Effect::Deny, .. }));
        assert!(matches!(&entries[2], Entry::Refused { why, .. } if why == "not a string"));
        assert!(read(&serde_json::json!({}), &anchors()).is_err());
    }
}
