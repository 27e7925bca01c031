//! How `assent connect` edits a client's settings: JSON (with comments) through a concrete
//! syntax tree (jsonc-parser's CST: every comment, blank line and the order of keys stay as the
//! person wrote them), TOML through `toml_edit` (the same, for Codex), and files of Assent's own
//! written whole. Each edit says whether it changed anything; a file that changes is backed up
//! first, beside itself.

use super::Done;
use crate::home::Home;
use anyhow::{Context, Result, bail};
use jsonc_parser::cst::{CstArray, CstInputValue, CstObject, CstRootNode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The JSON value `v` as the CST takes it.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect()),
    }
}

/// Writes `text` to `file`, a backup of what it held beside it first: `FILE.assent-backup-SECS`.
fn write(file: &Path, old: Option<&str>, text: &str) -> Result<Option<PathBuf>> {
    let backup = match old {
        Some(old) => {
            let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            let base = format!("{}.assent-backup-{secs}", file.file_name().unwrap_or_default().to_string_lossy());
            // Never over an earlier backup (two runs in one second).
            let b = (0..)
                .map(|n| file.with_file_name(if n == 0 { base.clone() } else { format!("{base}-{n}") }))
                .find(|b| !b.exists())
                .unwrap_or_else(|| file.with_file_name(&base));
            std::fs::write(&b, old).with_context(|| format!("writing the backup {}", b.display()))?;
            Some(b)
        }
        None => None,
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))?;
    Ok(backup)
}

/// The backups `write` made of `file`, oldest first.
fn backups(file: &Path) -> Vec<PathBuf> {
    let Some(name) = file.file_name().map(|n| format!("{}.assent-backup-", n.to_string_lossy())) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(file.parent().unwrap_or(Path::new(".")))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&name))
                .map(|e| (e.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), e.path()))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// Reads `file` (none if it is not there).
fn read(file: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(file) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// Edits the JSON (with comments) in `file` with `f`, which says whether it changed it; a file
/// `f` leaves with nothing in it (an undo of a file Assent made) is removed.
pub(super) fn json_file(file: &Path, f: impl FnOnce(&CstRootNode) -> Result<bool>) -> Result<Done> {
    let old = read(file)?;
    let text = old.clone().unwrap_or_else(|| "{}\n".into());
    let root = CstRootNode::parse(&text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| anyhow::anyhow!("{} is not JSON Assent can edit ({e}); nothing changed", file.display()))?;
    if root.value().is_some() && root.object_value().is_none() {
        bail!("{} does not hold a JSON object; nothing changed", file.display());
    }
    if !f(&root)? {
        return Ok(Done::Unchanged);
    }
    // Undone to what a backup of Assent's held (the same value): that backup's text, so that the
    // person's own layout comes back as they wrote it (an object the hook was added to had to be
    // laid out on several lines).
    let value = root.to_serde_value();
    let same = backups(file).into_iter().rev().find_map(|b| {
        let t = std::fs::read_to_string(&b).ok()?;
        let v = CstRootNode::parse(&t, &jsonc_parser::ParseOptions::default()).ok()?.to_serde_value();
        (v == value).then_some(t)
    });
    if let Some(t) = same
        && old.as_deref() != Some(t.as_str())
    {
        return Ok(Done::Changed { backup: write(file, old.as_deref(), &t)? });
    }
    let empty = root
        .object_value()
        .is_some_and(|o| o.properties().iter().all(|p| p.decoded_name().as_deref() == Some("version")));
    if empty && old.is_some() && is_ours(file) {
        std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
        return Ok(Done::Removed);
    }
    Ok(Done::Changed { backup: write(file, old.as_deref(), &root.to_string())? })
}

/// A settings file that is Assent's alone (Copilot CLI's `hooks/assent.json`).
fn is_ours(file: &Path) -> bool {
    file.file_name().is_some_and(|n| n == "assent.json")
}

/// Whether a hook's command line is Assent's for `client`.
fn ours(command: &str, client: &str) -> bool {
    command.contains("assent") && command.contains(&format!(" hook {client}"))
}

/// The string property `key` of the object `o` holds, if any.
fn string_of(o: &CstObject, key: &str) -> Option<String> {
    o.get(key)?.value()?.as_string_lit()?.decoded_value().ok()
}

/// Takes out the hooks of `client` from each group of `list`, and groups left empty; whether any.
fn take_out_groups(list: &CstArray, client: &str) -> bool {
    let mut changed = false;
    for group in list.elements() {
        let Some(g) = group.as_object() else { continue };
        match g.array_value("hooks") {
            Some(hooks) => {
                for h in hooks.elements() {
                    if h.as_object().and_then(|o| string_of(&o, "command")).is_some_and(|c| ours(&c, client)) {
                        h.remove();
                        changed = true;
                    }
                }
                if changed && hooks.elements().is_empty() {
                    group.remove();
                }
            }
            // A flat entry (Copilot CLI's).
            None => {
                let command = string_of(&g, "bash").or_else(|| string_of(&g, "command"));
                if command.is_some_and(|c| ours(&c, client)) {
                    group.remove();
                    changed = true;
                }
            }
        }
    }
    changed
}

/// Whether `list` holds the hook `line` already.
fn has_line(list: &CstArray, line: &str) -> bool {
    list.to_serde_value().and_then(|v| v.as_array().cloned()).unwrap_or_default().iter().any(|g| {
        let hooks = g["hooks"].as_array().cloned().unwrap_or_else(|| vec![g.clone()]);
        hooks.iter().any(|h| h["command"].as_str().or_else(|| h["bash"].as_str()) == Some(line))
    })
}

/// Adds (or with `undo` takes out) `entry` under `hooks.EVENT` of the root object; empty
/// containers it leaves behind go too.
fn event_list(root: &CstRootNode, client: &str, event: &str, line: &str, entry: Value, undo: bool) -> Result<bool> {
    let obj = root.object_value_or_set();
    if undo {
        let Some(hooks) = obj.object_value("hooks") else { return Ok(false) };
        let Some(list) = hooks.array_value(event) else { return Ok(false) };
        let changed = take_out_groups(&list, client);
        if changed && list.elements().is_empty() {
            if let Some(p) = hooks.get(event) {
                p.remove();
            }
            if hooks.properties().is_empty()
                && let Some(p) = obj.get("hooks")
            {
                p.remove();
            }
        }
        return Ok(changed);
    }
    let hooks = obj.object_value_or_create("hooks").context("`hooks` in the settings is not an object")?;
    let list = hooks.array_value_or_create(event).with_context(|| format!("`hooks.{event}` is not a list"))?;
    if has_line(&list, line) {
        return Ok(false);
    }
    // An older hook of Assent's (another path, home or wait) gives way to this one.
    take_out_groups(&list, client);
    list.ensure_multiline();
    list.append(input(&entry));
    Ok(true)
}

/// A client's hook in a `hooks` table: `entry` under `event` (the file given `"version": 1` first
/// when `versioned`), or taken out.
pub(super) fn hook_table(
    root: &CstRootNode,
    client: &str,
    event: &str,
    line: &str,
    entry: Value,
    versioned: bool,
    undo: bool,
) -> Result<bool> {
    if versioned && !undo && root.object_value_or_set().get("version").is_none() {
        root.object_value_or_set().insert(0, "version", CstInputValue::Number("1".into()));
    }
    event_list(root, client, event, line, entry, undo)
}

/// An MCP client's server `name` (in `mcpServers`) put behind `assent mcp proxy`, or taken back.
pub(super) fn mcp_server(root: &CstRootNode, home: &Home, name: &str, undo: bool) -> Result<bool> {
    let servers = root.object_value().and_then(|o| o.object_value("mcpServers"));
    let Some(server) = servers.and_then(|s| s.object_value(name)) else {
        bail!("no MCP server `{name}` in the file's `mcpServers`; nothing changed");
    };
    let v = server.to_serde_value().unwrap_or_default();
    let command = v["command"].as_str().unwrap_or_default().to_string();
    let args: Vec<String> =
        v["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(String::from)).collect();
    let proxied = args.iter().any(|a| a == "proxy") && args.iter().any(|a| a == "mcp") && command.contains("assent");
    if command.is_empty() {
        bail!(
            "`{name}` is not started by a command (an HTTP server?): give it `assent mcp proxy --url URL` as its command by hand (docs/clients.md)"
        );
    }
    let (new_command, new_args) = match (proxied, undo) {
        (true, false) | (false, true) => return Ok(false),
        (false, false) => {
            let exe = std::env::current_exe().context("where this binary is")?.display().to_string();
            let mut a = vec![
                "--home".to_string(),
                home.dir.display().to_string(),
                "mcp".into(),
                "proxy".into(),
                "--name".into(),
                name.into(),
                "--".into(),
                command,
            ];
            a.extend(args);
            (exe, a)
        }
        (true, true) => {
            let at = args
                .iter()
                .position(|a| a == "--")
                .context("the proxy's line has no `--` before the server's command; nothing changed")?;
            let mut rest = args[at + 1..].to_vec();
            if rest.is_empty() {
                bail!("the proxy's line names no server command; nothing changed");
            }
            let c = rest.remove(0);
            (c, rest)
        }
    };
    match server.get("command") {
        Some(p) => p.set_value(CstInputValue::String(new_command)),
        None => {
            server.append("command", CstInputValue::String(new_command));
        }
    }
    match server.get("args") {
        Some(p) if new_args.is_empty() && undo => p.remove(),
        Some(p) => p.set_value(input(&json!(new_args))),
        None => {
            server.append("args", input(&json!(new_args)));
        }
    }
    Ok(true)
}

/// Edits the TOML in `file` with `f`, keeping its comments and layout.
pub(super) fn toml_file(file: &Path, f: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<bool>) -> Result<Done> {
    let old = read(file)?;
    let mut doc: toml_edit::DocumentMut = old
        .as_deref()
        .unwrap_or_default()
        .parse()
        .map_err(|e| anyhow::anyhow!("{} is not TOML Assent can edit ({e}); nothing changed", file.display()))?;
    if !f(&mut doc)? {
        return Ok(Done::Unchanged);
    }
    Ok(Done::Changed { backup: write(file, old.as_deref(), &doc.to_string())? })
}

/// What marks a line `assent connect` added to Codex's configuration, so `--undo` takes out
/// exactly those.
const MARK: &str = " # added by assent connect";

/// Codex's PermissionRequest hook and the feature flag hooks need.
pub(super) fn codex(doc: &mut toml_edit::DocumentMut, line: &str, secs: u64, undo: bool) -> Result<bool> {
    use toml_edit::{ArrayOfTables, Item, Table, value};
    let is_ours = |t: &Table| {
        t.get("hooks").and_then(Item::as_array_of_tables).is_some_and(|hs| {
            hs.iter().any(|h| h.get("command").and_then(Item::as_str).is_some_and(|c| ours(c, "codex")))
        })
    };
    let groups = doc.get("hooks").and_then(|h| h.get("PermissionRequest")).and_then(Item::as_array_of_tables);
    let present = groups.is_some_and(|g| {
        g.iter().any(|t| {
            t.get("hooks")
                .and_then(Item::as_array_of_tables)
                .is_some_and(|hs| hs.iter().any(|h| h.get("command").and_then(Item::as_str) == Some(line)))
        })
    });
    if undo {
        let mut changed = false;
        if let Some(g) =
            doc.get_mut("hooks").and_then(|h| h.get_mut("PermissionRequest")).and_then(Item::as_array_of_tables_mut)
        {
            let before = g.len();
            g.retain(|t| !is_ours(t));
            changed = g.len() != before;
            if g.is_empty()
                && let Some(h) = doc.get_mut("hooks").and_then(Item::as_table_like_mut)
            {
                h.remove("PermissionRequest");
                if h.is_empty() {
                    doc.remove("hooks");
                }
            }
        }
        let flagged =
            doc.get("features").and_then(|f| f.get("hooks")).and_then(Item::as_value).is_some_and(|v| {
                v.decor().suffix().and_then(|s| s.as_str()).is_some_and(|s| s.contains("assent connect"))
            });
        if flagged && let Some(f) = doc.get_mut("features").and_then(Item::as_table_like_mut) {
            f.remove("hooks");
            changed = true;
            if f.is_empty() {
                doc.remove("features");
            }
        }
        return Ok(changed);
    }
    if present {
        return Ok(false);
    }
    let features = doc.entry("features").or_insert_with(|| Item::Table(Table::new()));
    let features = features.as_table_like_mut().context("`features` in config.toml is not a table")?;
    if features.get("hooks").and_then(Item::as_bool) != Some(true) {
        let mut v = toml_edit::Value::from(true);
        v.decor_mut().set_suffix(MARK);
        features.insert("hooks", Item::Value(v));
    }
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let hooks = hooks.as_table_mut().context("`hooks` in config.toml is not a table")?;
    let list = hooks.entry("PermissionRequest").or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
    let list = list.as_array_of_tables_mut().context("`hooks.PermissionRequest` is not a list of tables")?;
    // An older hook of Assent's (another path, home or wait) gives way to this one.
    list.retain(|t| !is_ours(t));
    let mut hook = Table::new();
    hook.insert("type", value("command"));
    hook.insert("command", value(line));
    hook.insert("timeout", value(secs as i64));
    let mut inner = ArrayOfTables::new();
    inner.push(hook);
    let mut group = Table::new();
    group.insert("matcher", value(""));
    group.insert("hooks", Item::ArrayOfTables(inner));
    list.push(group);
    Ok(true)
}

/// A file of Assent's own (OpenCode's plugin, Cline's hook file): written whole, or removed by
/// `undo`; one that is there and not Assent's is left alone.
pub(super) fn own_file(file: &Path, text: &str, undo: bool) -> Result<Done> {
    let old = read(file)?;
    let assents = |t: &str| t.contains("Assent") && t.contains(" hook ");
    match (old, undo) {
        (None, true) => Ok(Done::Unchanged),
        (Some(t), true) if assents(&t) => {
            std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
            Ok(Done::Removed)
        }
        (Some(_), true) => bail!("{} is not Assent's; nothing changed", file.display()),
        (Some(t), false) if t == text => Ok(Done::Unchanged),
        (Some(t), false) if !assents(&t) => {
            bail!("{} is there and not Assent's: move it aside first (nothing changed)", file.display())
        }
        (old, false) => {
            let backup = write(file, old.as_deref(), text)?;
            #[cfg(unix)]
            if file.file_name().is_some_and(|n| n == "PreToolUse") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755))?;
            }
            Ok(Done::Changed { backup })
        }
    }
}
