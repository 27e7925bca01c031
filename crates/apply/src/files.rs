//! `file.write` `{"path", "content"}` and `file.delete` `{"path"}`.
//!
//! At proposal time the path is checked against the [`PathPolicy`] and the target snapshotted
//! (the base the person reviews); the preview is a diff of the current content against the
//! proposed one. Only regular files are targets (or a missing file whose folder is real).
//! At apply time the path is checked again, its folder opened without following a link and
//! compared with the one recorded at proposal time, the target re-snapshotted through that
//! folder, and a target that changed since the proposal fails `stale` with nothing written.
//! Writes are atomic and happen in the opened folder: a temporary file created there with mode
//! 0600, written, given its final mode, fsynced, renamed over the target, and the folder
//! fsynced, keeping the replaced file's permissions (less set-user-ID and set-group-ID).

use crate::at::{self, Folder, TargetError, Walk};
use crate::diff::{self, is_binary};
use crate::paths::PathPolicy;
use crate::snapshot::{self, Snapshot, SnapshotError, sha256_hex};
use assent_core::CoreError;
use assent_core::crash;
use assent_core::kinds::{ApplyCtx, ApplyOutcome, Kind, PrepareCtx, Prepared, Reconciled};
use assent_core::payloads::{self, KindName, Payload};
use assent_core::preview::{Diff, FilePreview, Preview};
use assent_core::proposal::{ErrorInfo, Proposal};
use serde_json::{Map, Value, json};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn invalid(message: impl Into<String>) -> CoreError {
    CoreError::invalid("invalid_payload", message)
}

fn object(payload: Value, kind: &str, fields: &[&str]) -> Result<Map<String, Value>, CoreError> {
    let Value::Object(map) = payload else {
        return Err(invalid(format!("a {kind} payload is an object with {}", fields.join(", "))));
    };
    if let Some(k) = map.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(invalid(format!("unknown field `{}` in a {kind} payload", assent_core::kinds::clip_pub(k, 64))));
    }
    Ok(map)
}

fn text_field<'a>(map: &'a Map<String, Value>, f: &str) -> Result<&'a str, CoreError> {
    map.get(f).and_then(Value::as_str).ok_or_else(|| invalid(format!("`{f}` is required and must be a string")))
}

fn base_of(p: &Proposal) -> Snapshot {
    p.base.clone().and_then(|b| serde_json::from_value(b).ok()).unwrap_or(Snapshot::absent(None))
}

fn fail(code: &str, message: impl Into<String>) -> ApplyOutcome {
    ApplyOutcome::failed(code, message)
}

/// The error for a target that cannot be proposed, with a stable code.
fn refused(e: SnapshotError, path: &Path) -> CoreError {
    let shown = path.display();
    match e {
        SnapshotError::TooLarge => CoreError::invalid("target_too_large", format!("`{shown}`: {e}")),
        SnapshotError::Target(t) => {
            let message = format!("`{shown}`: {t}");
            match &t {
                TargetError::Symlink => CoreError::invalid("path_is_symlink", message),
                TargetError::Directory => CoreError::invalid("path_is_directory", message),
                TargetError::NotRegular(_) => CoreError::invalid("not_a_regular_file", message),
                TargetError::FolderNotReal => CoreError::invalid("invalid_path", message),
                TargetError::Io(_) => CoreError::invalid("unreadable_target", message),
            }
        }
    }
}

/// The folder and the file name of a checked path.
fn split(path: &Path) -> (&Path, &OsStr) {
    (path.parent().unwrap_or(Path::new("/")), path.file_name().unwrap_or_default())
}

/// The target's state now, read through its folder opened without following links; absent
/// when the folder does not exist yet.
type Current = (Option<Folder>, Snapshot, Option<Vec<u8>>);
fn current(path: &Path) -> Result<Current, SnapshotError> {
    let (dir, name) = split(path);
    match at::walk(dir)? {
        Walk::Found(folder) => {
            let (snap, bytes) = snapshot::take(&folder, name)?;
            Ok((Some(folder), snap, bytes))
        }
        Walk::Missing { .. } => Ok((None, Snapshot::absent(None), None)),
    }
}

/// Re-checks the path at apply time: it must still resolve to what was approved.
fn recheck(policy: &PathPolicy, p: &Proposal, path: &str) -> Result<PathBuf, ErrorInfo> {
    match policy.check(path, &p.agent) {
        Ok(real) if real == Path::new(path) => Ok(real),
        Ok(real) => Err(ErrorInfo {
            code: "stale".into(),
            message: format!("`{path}` now resolves to `{}`; nothing was written", real.display()),
        }),
        Err(e) => Err(ErrorInfo { code: e.code().into(), message: format!("{e}; nothing was written") }),
    }
}

fn stale(path: &str) -> ErrorInfo {
    ErrorInfo { code: "stale".into(), message: format!("`{path}` changed since it was proposed; nothing was written") }
}

fn temp_name(name: &OsStr, id: &str) -> OsString {
    OsString::from(format!(".{}.assent-{id}.tmp", name.to_string_lossy()))
}

/// Opens the target's folder for apply: it must be the folder recorded at proposal time (or,
/// when it did not exist then, is created now), reached without following a link.
fn folder_for_apply(path: &Path, base: &Snapshot) -> Result<Folder, ErrorInfo> {
    let shown = path.display();
    let replaced = || ErrorInfo {
        code: "stale".into(),
        message: format!("the folder of `{shown}` was replaced since it was proposed; nothing was written"),
    };
    let (dir, _) = split(path);
    let walked = at::walk(dir).map_err(|e| match e {
        TargetError::FolderNotReal => replaced(),
        e => ErrorInfo { code: "write_failed".into(), message: format!("cannot open the folder of `{shown}`: {e}") },
    })?;
    match (walked, base.folder) {
        (Walk::Found(f), Some(id)) if f.id == id => Ok(f),
        (_, Some(_)) => Err(replaced()),
        (w, None) => w.create().map_err(|e| match e {
            TargetError::FolderNotReal => replaced(),
            e => ErrorInfo {
                code: "write_failed".into(),
                message: format!("cannot create the folder of `{shown}`: {e}"),
            },
        }),
    }
}

/// Writes `content` as `name` in `folder` atomically with `mode`.
fn atomic_write(folder: &Folder, name: &OsStr, content: &[u8], mode: u32, id: &str) -> std::io::Result<()> {
    let tmp = temp_name(name, id);
    folder.remove(&tmp, true)?;
    // Created 0600: the new content is never readable by more people than the final file.
    let mut f = folder.create_new(&tmp)?;
    let result = (|| {
        f.write_all(content)?;
        crash::point("file-temp-filled");
        at::set_mode(&f, mode)?;
        f.sync_all()?;
        crash::point("file-temp-written");
        folder.rename(&tmp, name)?;
        crash::point("file-renamed");
        folder.sync()
    })();
    if result.is_err() {
        let _ = folder.remove(&tmp, true);
    }
    result
}

/// The `file.write` kind.
pub struct FileWrite {
    /// Which paths may be written.
    pub policy: Arc<PathPolicy>,
}

impl FileWrite {
    fn normalize(&self, payload: Value, agent: &str) -> Result<(PathBuf, String), CoreError> {
        let map = object(payload, KindName::FileWrite.as_str(), &["path", "content"])?;
        let path = self.policy.check(text_field(&map, "path")?, agent)?;
        let content = text_field(&map, "content")?.to_string();
        Ok((path, content))
    }
}

/// The preview of replacing `current` (a snapshot and its bytes) with `new`.
/// What the preview says of the proposed content alone.
struct NewSide {
    sha256: String,
    /// Its invisible characters, counted.
    found: std::collections::BTreeMap<char, usize>,
}

impl NewSide {
    fn of(content: &str) -> NewSide {
        let mut found = std::collections::BTreeMap::new();
        assent_core::invisible::scan_str(content, &mut found);
        NewSide { sha256: sha256_hex(content.as_bytes()), found }
    }
}

fn write_preview(path: &Path, base: &Snapshot, current: Option<&[u8]>, new: &str, own: NewSide) -> Preview {
    let shown = path.display().to_string();
    let (binary_current, diff) = match current.map(|b| (b, std::str::from_utf8(b).ok().filter(|t| !t.contains('\0')))) {
        Some((b, None)) => (
            true,
            Diff::summarized(format!("a binary file of {} bytes is replaced by {} bytes of text", b.len(), new.len())),
        ),
        Some((_, Some(text))) => (false, diff::diff(text, new)),
        None if base.exists => (false, Diff::too_large()),
        None => (false, diff::diff("", new)),
    };
    let mut found = own.found;
    assent_core::invisible::scan_str(&shown, &mut found);
    Preview::FileWrite(FilePreview {
        invisible_characters: assent_core::invisible::report(&found),
        path: shown,
        exists: base.exists,
        current_size: base.size,
        current_sha256: base.sha256.clone(),
        new_size: Some(new.len() as u64),
        new_sha256: Some(own.sha256),
        binary_current,
        diff,
        content_withheld: false,
        content_pruned: false,
    })
}

#[async_trait::async_trait]
impl Kind for FileWrite {
    fn name(&self) -> KindName {
        KindName::FileWrite
    }

    fn facts(&self, payload: &Payload) -> assent_core::rules::Facts {
        let path = match payload {
            Payload::FileWrite(w) => Some(w.path.clone()),
            _ => None,
        };
        assent_core::rules::Facts { path, ..Default::default() }
    }

    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError> {
        let (path, content) = self.normalize(payload, &ctx.agent)?;
        // A large proposed content is hashed and scanned on a second thread while the current
        // file is read and hashed on this one.
        let (now, own) = if content.len() >= diff::PARALLEL_BYTES {
            std::thread::scope(|s| {
                let own = s.spawn(|| NewSide::of(&content));
                let now = current(&path);
                (now, own.join().unwrap_or_else(|_| NewSide::of(&content)))
            })
        } else {
            (current(&path), NewSide::of(&content))
        };
        let (_, base, bytes) = now.map_err(|e| refused(e, &path))?;
        let preview = write_preview(&path, &base, bytes.as_deref(), &content, own);
        let payload = Payload::FileWrite(payloads::FileWrite { path: path.display().to_string(), content });
        Ok(Prepared { payload, base: Some(json!(base)), preview })
    }

    fn edit(&self, payload: &Payload, edits: &Value) -> Result<Payload, CoreError> {
        let Payload::FileWrite(w) = payload else {
            return Err(CoreError::invalid("invalid_edits", payload.not_of(KindName::FileWrite)));
        };
        let map = object(edits.clone(), "file.write edit", &["content", "path"])
            .map_err(|_| CoreError::invalid("invalid_edits", "edits to a file.write are {\"content\": string}"))?;
        if map.get("path").is_some_and(|p| p.as_str() != Some(w.path.as_str())) {
            return Err(CoreError::invalid(
                "invalid_edits",
                "the path of a file.write cannot be changed, only its content",
            ));
        }
        let content = map.get("content").and_then(Value::as_str).ok_or_else(|| {
            CoreError::invalid("invalid_edits", "edits to a file.write must give `content` as a string")
        })?;
        Ok(Payload::FileWrite(payloads::FileWrite { path: w.path.clone(), content: content.to_string() }))
    }

    async fn apply(&self, p: &Proposal, payload: &Payload, _ctx: &ApplyCtx) -> ApplyOutcome {
        let Payload::FileWrite(w) = payload else { return fail("integrity", payload.not_of(KindName::FileWrite)) };
        let (policy, p, w) = (self.policy.clone(), p.clone(), w.clone());
        tokio::task::spawn_blocking(move || write_now(&policy, &p, &w))
            .await
            .unwrap_or_else(|e| fail("write_failed", format!("the write task failed: {e}")))
    }

    async fn reconcile(&self, p: &Proposal, payload: &Payload) -> Reconciled {
        let Payload::FileWrite(w) = payload else { return Reconciled::mismatch(payload, KindName::FileWrite) };
        let path = PathBuf::from(&w.path);
        let new_hash = sha256_hex(w.content.as_bytes());
        match current(&path) {
            Ok((folder, now, _)) => {
                if let Some(f) = &folder {
                    let _ = f.remove(&temp_name(split(&path).1, &p.id), true);
                }
                if now.sha256.as_deref() == Some(new_hash.as_str()) {
                    Reconciled::Applied(json!({
                        "path": path.display().to_string(), "sha256": new_hash, "size": now.size, "reconciled": true
                    }))
                } else if now.same_content(&base_of(p)) {
                    Reconciled::NotApplied
                } else {
                    Reconciled::Failed(stale(&path.display().to_string()))
                }
            }
            Err(e) => Reconciled::Failed(ErrorInfo {
                code: "outcome_unknown".into(),
                message: format!("cannot read the target: {e}"),
            }),
        }
    }
}

/// The target at apply time, ready to change: the path checked again, its folder opened and
/// the same as at proposal time, the target as the person saw it. Or why not.
fn ready(policy: &PathPolicy, p: &Proposal, raw: &str) -> Result<(PathBuf, Folder, Snapshot), ApplyOutcome> {
    let refused = |e: ErrorInfo| ApplyOutcome { result: None, error: Some(e) };
    let path = recheck(policy, p, raw).map_err(refused)?;
    let base = base_of(p);
    let folder = folder_for_apply(&path, &base).map_err(refused)?;
    match snapshot::take(&folder, split(&path).1) {
        Ok((now, _)) if now.same_content(&base) => Ok((path, folder, base)),
        Ok(_) => Err(refused(stale(raw))),
        Err(e) => Err(fail("write_failed", format!("cannot read `{raw}`: {e}"))),
    }
}

fn write_now(policy: &PathPolicy, p: &Proposal, w: &payloads::FileWrite) -> ApplyOutcome {
    let (raw, content) = (w.path.as_str(), w.content.as_str());
    let (path, folder, base) = match ready(policy, p, raw) {
        Ok(r) => r,
        Err(out) => return out,
    };
    let name = split(&path).1;
    // The replaced file's permissions, less set-user-ID and set-group-ID: new content is not
    // a program someone vetted.
    let mode = base.mode.map(|m| m & 0o1777).unwrap_or(0o644);
    match atomic_write(&folder, name, content.as_bytes(), mode, &p.id) {
        Ok(()) => ApplyOutcome::applied(json!({
            "path": raw,
            "sha256": sha256_hex(content.as_bytes()),
            "size": content.len(),
            "replaced": base.exists,
        })),
        Err(e) => fail("write_failed", format!("cannot write `{raw}`: {e}")),
    }
}

/// The `file.delete` kind.
pub struct FileDelete {
    /// Which paths may be deleted.
    pub policy: Arc<PathPolicy>,
}

#[async_trait::async_trait]
impl Kind for FileDelete {
    fn name(&self) -> KindName {
        KindName::FileDelete
    }
    fn destructive(&self, _payload: &Payload) -> bool {
        true
    }

    fn facts(&self, payload: &Payload) -> assent_core::rules::Facts {
        let path = match payload {
            Payload::FileDelete(d) => Some(d.path.clone()),
            _ => None,
        };
        assent_core::rules::Facts { path, ..Default::default() }
    }

    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError> {
        let map = object(payload, KindName::FileDelete.as_str(), &["path"])?;
        let path = self.policy.check(text_field(&map, "path")?, &ctx.agent)?;
        let (_, base, bytes) = current(&path).map_err(|e| refused(e, &path))?;
        if !base.exists {
            return Err(CoreError::invalid("target_not_found", format!("`{}` does not exist", path.display())));
        }
        let shown = path.display().to_string();
        let binary_current = bytes.as_deref().is_some_and(is_binary);
        let diff = match bytes.as_deref() {
            Some(b) if !binary_current => diff::diff(std::str::from_utf8(b).unwrap_or(""), ""),
            Some(_) => Diff { hunks: Some(Vec::new()), ..Default::default() },
            None => Diff::too_large(),
        };
        let preview = Preview::FileDelete(FilePreview {
            invisible_characters: diff::flags(&[&shown]),
            path: shown,
            exists: true,
            current_size: base.size,
            current_sha256: base.sha256.clone(),
            new_size: None,
            new_sha256: None,
            binary_current,
            diff,
            content_withheld: false,
            content_pruned: false,
        });
        let payload = Payload::FileDelete(payloads::FileDelete { path: path.display().to_string() });
        Ok(Prepared { payload, base: Some(json!(base)), preview })
    }

    fn edit(&self, _payload: &Payload, _edits: &Value) -> Result<Payload, CoreError> {
        Err(CoreError::invalid("invalid_edits", "a file.delete has nothing to edit: approve or reject it"))
    }

    async fn apply(&self, p: &Proposal, payload: &Payload, _ctx: &ApplyCtx) -> ApplyOutcome {
        let Payload::FileDelete(d) = payload else { return fail("integrity", payload.not_of(KindName::FileDelete)) };
        let (policy, p, d) = (self.policy.clone(), p.clone(), d.clone());
        tokio::task::spawn_blocking(move || {
            let raw = d.path.as_str();
            let (path, folder, _) = match ready(&policy, &p, raw) {
                Ok(r) => r,
                Err(out) => return out,
            };
            match folder.remove(split(&path).1, false).and_then(|_| folder.sync()) {
                Ok(()) => ApplyOutcome::applied(json!({ "path": raw, "deleted": true })),
                Err(e) => fail("write_failed", format!("cannot delete `{raw}`: {e}")),
            }
        })
        .await
        .unwrap_or_else(|e| fail("write_failed", format!("the delete task failed: {e}")))
    }

    async fn reconcile(&self, p: &Proposal, payload: &Payload) -> Reconciled {
        let Payload::FileDelete(d) = payload else { return Reconciled::mismatch(payload, KindName::FileDelete) };
        let path = PathBuf::from(&d.path);
        match current(&path) {
            Ok((_, now, _)) if !now.exists => {
                Reconciled::Applied(json!({"path": path.display().to_string(), "deleted": true, "reconciled": true}))
            }
            Ok((_, now, _)) if now.same_content(&base_of(p)) => Reconciled::NotApplied,
            Ok(_) => Reconciled::Failed(stale(&path.display().to_string())),
            Err(e) => Reconciled::Failed(ErrorInfo {
                code: "outcome_unknown".into(),
                message: format!("cannot read the target: {e}"),
            }),
        }
    }
}
