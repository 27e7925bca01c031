//! `file.write` `{"path", "content"}` and `file.delete` `{"path"}`.
//!
//! At proposal time the path is checked against the [`PathPolicy`] and the target snapshotted
//! (the base the person reviews); the preview is a diff of the current content against the
//! proposed one. At apply time the path is checked again, the target re-snapshotted, and a
//! target that changed since the proposal fails `stale` with nothing written. Writes are atomic:
//! a temporary file in the same folder, fsync, rename, fsync of the folder, keeping the
//! replaced file's permissions.

use crate::diff::{self, is_binary};
use crate::paths::PathPolicy;
use crate::snapshot::{self, Snapshot, sha256_hex};
use assent_core::crash;
use assent_core::kinds::{ApplyOutcome, Kind, PrepareCtx, Prepared, Reconciled};
use assent_core::proposal::{ErrorInfo, Proposal};
use assent_core::{CoreError, KindClass};
use serde_json::{Map, Value, json};
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
    p.base.clone().and_then(|b| serde_json::from_value(b).ok()).unwrap_or(Snapshot {
        exists: false,
        sha256: None,
        size: 0,
        mtime_ms: None,
        mode: None,
    })
}

fn fail(code: &str, message: impl Into<String>) -> ApplyOutcome {
    ApplyOutcome::failed(code, message)
}

fn io_refused(e: std::io::Error, path: &Path) -> CoreError {
    CoreError::invalid("unreadable_target", format!("cannot read `{}`: {e}", path.display()))
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

/// Fsyncs a folder so a rename or delete in it is durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn temp_path(target: &Path, id: &str) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    target.with_file_name(format!(".{name}.assent-{id}.tmp"))
}

/// Writes `content` to `target` atomically with `mode`.
fn atomic_write(target: &Path, content: &[u8], mode: Option<u32>, id: &str) -> std::io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("/"));
    let tmp = temp_path(target, id);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let result = (|| {
        f.write_all(content)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode.unwrap_or(0o644)))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        f.sync_all()?;
        crash::point("file-temp-written");
        std::fs::rename(&tmp, target)?;
        crash::point("file-renamed");
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
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
        let map = object(payload, "file.write", &["path", "content"])?;
        let path = self.policy.check(text_field(&map, "path")?, agent)?;
        let content = text_field(&map, "content")?.to_string();
        Ok((path, content))
    }
}

/// The preview of replacing `current` (a snapshot and its bytes) with `new`.
fn write_preview(path: &Path, base: &Snapshot, current: Option<&[u8]>, new: &str) -> Value {
    let mut pv = json!({
        "type": "file.write",
        "path": path.display().to_string(),
        "exists": base.exists,
        "current_size": base.size,
        "current_sha256": base.sha256,
        "new_size": new.len(),
        "new_sha256": sha256_hex(new.as_bytes()),
        "invisible_characters": diff::flags(new),
        "binary_current": false,
    });
    let d = match current {
        Some(b) if is_binary(b) => {
            pv["binary_current"] = json!(true);
            json!({"too_large": false, "hunks": [], "stats": null, "truncated": false, "summary":
                format!("a binary file of {} bytes is replaced by {} bytes of text", b.len(), new.len())})
        }
        Some(b) => diff::diff(std::str::from_utf8(b).unwrap_or(""), new),
        None if base.exists => json!({"too_large": true, "hunks": [], "stats": null, "truncated": false}),
        None => diff::diff("", new),
    };
    if let (Value::Object(pv), Value::Object(d)) = (&mut pv, d) {
        pv.extend(d);
    }
    pv
}

#[async_trait::async_trait]
impl Kind for FileWrite {
    fn name(&self) -> &'static str {
        "file.write"
    }
    fn class(&self) -> KindClass {
        KindClass::Applied
    }
    fn blocking(&self) -> bool {
        true
    }

    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError> {
        let (path, content) = self.normalize(payload, &ctx.agent)?;
        let (base, bytes) = snapshot::take(&path).map_err(|e| io_refused(e, &path))?;
        let preview = write_preview(&path, &base, bytes.as_deref(), &content);
        let payload = json!({ "path": path.display().to_string(), "content": content });
        Ok(Prepared { payload, base: Some(json!(base)), preview })
    }

    fn edit(&self, payload: &Value, edits: &Value) -> Result<Value, CoreError> {
        let map = object(edits.clone(), "file.write edit", &["content", "path"])
            .map_err(|_| CoreError::invalid("invalid_edits", "edits to a file.write are {\"content\": string}"))?;
        if map.get("path").is_some_and(|p| Some(p) != payload.get("path")) {
            return Err(CoreError::invalid(
                "invalid_edits",
                "the path of a file.write cannot be changed, only its content",
            ));
        }
        let content = map.get("content").and_then(Value::as_str).ok_or_else(|| {
            CoreError::invalid("invalid_edits", "edits to a file.write must give `content` as a string")
        })?;
        Ok(json!({ "path": payload["path"], "content": content }))
    }

    async fn apply(&self, p: &Proposal, payload: &Value) -> ApplyOutcome {
        let (policy, p, payload) = (self.policy.clone(), p.clone(), payload.clone());
        tokio::task::spawn_blocking(move || write_now(&policy, &p, &payload))
            .await
            .unwrap_or_else(|e| fail("write_failed", format!("the write task failed: {e}")))
    }

    async fn reconcile(&self, p: &Proposal, payload: &Value) -> Reconciled {
        let path = PathBuf::from(payload["path"].as_str().unwrap_or_default());
        let new_hash = sha256_hex(payload["content"].as_str().unwrap_or_default().as_bytes());
        let _ = std::fs::remove_file(temp_path(&path, &p.id));
        match snapshot::take(&path) {
            Ok((now, _)) if now.sha256.as_deref() == Some(new_hash.as_str()) => Reconciled::Applied(
                json!({"path": path.display().to_string(), "sha256": new_hash, "size": now.size, "reconciled": true}),
            ),
            Ok((now, _)) if now.same_content(&base_of(p)) => Reconciled::NotApplied,
            Ok(_) => Reconciled::Failed(stale(&path.display().to_string())),
            Err(e) => Reconciled::Failed(ErrorInfo {
                code: "outcome_unknown".into(),
                message: format!("cannot read the target: {e}"),
            }),
        }
    }
}

fn write_now(policy: &PathPolicy, p: &Proposal, payload: &Value) -> ApplyOutcome {
    let raw = payload["path"].as_str().unwrap_or_default();
    let content = payload["content"].as_str().unwrap_or_default();
    let path = match recheck(policy, p, raw) {
        Ok(x) => x,
        Err(e) => return ApplyOutcome { result: None, error: Some(e) },
    };
    let base = base_of(p);
    match snapshot::take(&path) {
        Ok((now, _)) if now.same_content(&base) => {}
        Ok(_) => return ApplyOutcome { result: None, error: Some(stale(raw)) },
        Err(e) => return fail("write_failed", format!("cannot read `{raw}`: {e}")),
    }
    if let Some(parent) = path.parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return fail("write_failed", format!("cannot create the folder of `{raw}`: {e}"));
    }
    match atomic_write(&path, content.as_bytes(), base.mode, &p.id) {
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
    fn name(&self) -> &'static str {
        "file.delete"
    }
    fn class(&self) -> KindClass {
        KindClass::Applied
    }
    fn blocking(&self) -> bool {
        true
    }
    fn destructive(&self, _payload: &Value) -> bool {
        true
    }

    fn prepare(&self, payload: Value, ctx: &PrepareCtx) -> Result<Prepared, CoreError> {
        let map = object(payload, "file.delete", &["path"])?;
        let path = self.policy.check(text_field(&map, "path")?, &ctx.agent)?;
        let (base, bytes) = snapshot::take(&path).map_err(|e| io_refused(e, &path))?;
        if !base.exists {
            return Err(CoreError::invalid("target_not_found", format!("`{}` does not exist", path.display())));
        }
        let mut preview = json!({
            "type": "file.delete",
            "path": path.display().to_string(),
            "exists": true,
            "current_size": base.size,
            "current_sha256": base.sha256,
            "binary_current": bytes.as_deref().is_some_and(is_binary),
        });
        let d = match bytes.as_deref() {
            Some(b) if !is_binary(b) => diff::diff(std::str::from_utf8(b).unwrap_or(""), ""),
            _ => json!({"too_large": bytes.is_none(), "hunks": [], "stats": null, "truncated": false}),
        };
        if let (Value::Object(pv), Value::Object(d)) = (&mut preview, d) {
            pv.extend(d);
        }
        Ok(Prepared { payload: json!({ "path": path.display().to_string() }), base: Some(json!(base)), preview })
    }

    fn edit(&self, _payload: &Value, _edits: &Value) -> Result<Value, CoreError> {
        Err(CoreError::invalid("invalid_edits", "a file.delete has nothing to edit: approve or reject it"))
    }

    async fn apply(&self, p: &Proposal, payload: &Value) -> ApplyOutcome {
        let (policy, p, payload) = (self.policy.clone(), p.clone(), payload.clone());
        tokio::task::spawn_blocking(move || {
            let raw = payload["path"].as_str().unwrap_or_default();
            let path = match recheck(&policy, &p, raw) {
                Ok(x) => x,
                Err(e) => return ApplyOutcome { result: None, error: Some(e) },
            };
            match snapshot::take(&path) {
                Ok((now, _)) if now.same_content(&base_of(&p)) => {}
                Ok(_) => return ApplyOutcome { result: None, error: Some(stale(raw)) },
                Err(e) => return fail("write_failed", format!("cannot read `{raw}`: {e}")),
            }
            match std::fs::remove_file(&path).and_then(|_| sync_dir(path.parent().unwrap_or(Path::new("/")))) {
                Ok(()) => ApplyOutcome::applied(json!({ "path": raw, "deleted": true })),
                Err(e) => fail("write_failed", format!("cannot delete `{raw}`: {e}")),
            }
        })
        .await
        .unwrap_or_else(|e| fail("write_failed", format!("the delete task failed: {e}")))
    }

    async fn reconcile(&self, p: &Proposal, payload: &Value) -> Reconciled {
        let path = PathBuf::from(payload["path"].as_str().unwrap_or_default());
        match snapshot::take(&path) {
            Ok((now, _)) if !now.exists => {
                Reconciled::Applied(json!({"path": path.display().to_string(), "deleted": true, "reconciled": true}))
            }
            Ok((now, _)) if now.same_content(&base_of(p)) => Reconciled::NotApplied,
            Ok(_) => Reconciled::Failed(stale(&path.display().to_string())),
            Err(e) => Reconciled::Failed(ErrorInfo {
                code: "outcome_unknown".into(),
                message: format!("cannot read the target: {e}"),
            }),
        }
    }
}
