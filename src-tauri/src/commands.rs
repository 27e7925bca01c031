//! The app's commands: each a few lines that call the engine. Decisions made here are
//! recorded with the channel `app`; they never go through the agent API.

use crate::Desktop;
use assent_core::engine::{BatchItem, BatchResult, GroupDecision};
use assent_core::proposal::{AgentInfo, AuditEntry};
use assent_core::store::ListQuery;
use assent_core::{Channel, CoreError, DecisionRequest, Outcome, Page, Principal, Proposal};
use serde::Serialize;
use serde_json::Value;
use tauri::State;

/// An error as the front end sees it: a stable code and a message.
#[derive(Debug, Serialize)]
pub struct CmdError {
    code: String,
    message: String,
}

impl From<CoreError> for CmdError {
    fn from(e: CoreError) -> Self {
        if matches!(e, CoreError::Store(_)) {
            tracing::error!(error = %e, "internal error");
            return CmdError { code: "internal".into(), message: "internal error; see the Assent log".into() };
        }
        CmdError { code: e.code().into(), message: e.to_string() }
    }
}

type Res<T> = Result<T, CmdError>;

/// A page of proposals.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn list_proposals(
    d: State<'_, Desktop>,
    status: Option<String>,
    agent: Option<String>,
    kind: Option<String>,
    group_id: Option<String>,
    text: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
) -> Res<Page> {
    let status = match status.filter(|s| !s.is_empty()) {
        Some(s) => Some(s.parse().map_err(|m: String| CmdError { code: "invalid_field".into(), message: m })?),
        None => None,
    };
    let q = ListQuery {
        status,
        agent: agent.filter(|s| !s.is_empty()),
        kind: kind.filter(|s| !s.is_empty()),
        group_id: group_id.filter(|s| !s.is_empty()),
        text: text.filter(|s| !s.trim().is_empty()),
        supersedes: None,
        session_id: None,
        node: None,
        before: None,
        limit: limit.unwrap_or(100),
    };
    Ok(d.engine.list(&Principal::Owner, q, cursor.as_deref()).await?)
}

/// One proposal and its audit trail.
#[derive(Serialize)]
pub struct Detail {
    proposal: Proposal,
    audit: Vec<AuditEntry>,
    /// The SHA-256 of its canonical payload: what the view sends back as `seen` with a
    /// decision, so that a decision is only ever for the proposal on screen.
    payload_sha256: String,
}

/// One proposal with its audit trail.
#[tauri::command]
pub async fn get_proposal(d: State<'_, Desktop>, id: String) -> Res<Detail> {
    let proposal = d.engine.get(&Principal::Owner, &id).await?;
    let audit = d.engine.audit_of(&Principal::Owner, &id).await?;
    let payload_sha256 = proposal.payload.sha256();
    Ok(Detail { proposal, audit, payload_sha256 })
}

/// The person decides. (Tauri commands take their arguments one by one.)
#[allow(clippy::too_many_arguments)]
#[tauri::command]
pub async fn decide(
    d: State<'_, Desktop>,
    id: String,
    outcome: Outcome,
    reason: Option<String>,
    feedback: Option<String>,
    edits: Option<Value>,
    allow_similar: Option<assent_core::proposal::AllowSimilar>,
    seen: Option<String>,
    run: Option<assent_core::confine::RunIn>,
    hosts: Option<Vec<String>>,
) -> Res<assent_core::engine::Decided> {
    let req = DecisionRequest { outcome, reason, feedback, edits, allow_similar, seen, run, hosts };
    Ok(d.engine.decide_one(&d.engine.person(Channel::App), &id, req).await?)
}

/// The rule "approve and allow similar" would save, in words, before it is saved.
#[tauri::command]
pub async fn similar_rule(d: State<'_, Desktop>, id: String) -> Res<assent_core::engine::rules::Similar> {
    Ok(d.engine.similar(&id).await?)
}

/// A page of the rules (`after`: the previous page's `next_after`), with how many recent
/// proposals each would have matched and how many prompts each saved this week.
#[tauri::command]
pub async fn list_rules(d: State<'_, Desktop>, after: Option<i64>) -> Res<assent_core::engine::rules::RuleList> {
    Ok(d.engine.rules(after, None).await?)
}

/// The person adds a rule.
#[tauri::command]
pub async fn add_rule(
    d: State<'_, Desktop>,
    rule: assent_core::engine::rules::NewRule,
) -> Res<assent_core::rules::Rule> {
    Ok(d.engine.add_rule(&d.engine.person(Channel::App), rule).await?)
}

/// The person removes a rule.
#[tauri::command]
pub async fn remove_rule(d: State<'_, Desktop>, id: String) -> Res<()> {
    d.engine.remove_rule(&d.engine.person(Channel::App), &id).await?;
    Ok(())
}

/// The person decides several at once.
#[tauri::command]
pub async fn decide_batch(d: State<'_, Desktop>, items: Vec<BatchItem>) -> Res<BatchResult> {
    Ok(d.engine.decide_batch(&d.engine.person(Channel::App), items).await?)
}

/// The person decides every pending proposal of a group together, all or nothing: one
/// agent's on one node (`node`: the proposals' node, on a team store).
#[tauri::command]
pub async fn decide_group(
    d: State<'_, Desktop>,
    group_id: String,
    agent: Option<String>,
    node: Option<String>,
    outcome: Outcome,
    reason: Option<String>,
    feedback: Option<String>,
) -> Res<BatchResult> {
    Ok(d.engine
        .decide_group(
            &d.engine.person(Channel::App),
            GroupDecision { group_id, agent, node, outcome, reason, feedback },
        )
        .await?)
}

/// A failed write proposed again.
#[tauri::command]
pub async fn retry(d: State<'_, Desktop>, id: String) -> Res<Proposal> {
    Ok(d.engine.retry(&d.engine.person(Channel::App), &id).await?)
}

/// Every agent.
#[tauri::command]
pub async fn list_agents(d: State<'_, Desktop>) -> Res<Vec<AgentInfo>> {
    Ok(d.engine.agents().await?)
}

/// Adds an agent; its token is returned once.
#[tauri::command]
pub async fn add_agent(d: State<'_, Desktop>, name: String) -> Res<String> {
    Ok(d.engine.add_agent(&name).await?)
}

/// Revokes an agent.
#[tauri::command]
pub async fn revoke_agent(d: State<'_, Desktop>, name: String) -> Res<()> {
    Ok(d.engine.revoke_agent(&name).await?)
}

/// Credentials' metadata.
#[tauri::command]
pub async fn list_credentials(d: State<'_, Desktop>) -> Res<Vec<assent_core::credentials::CredentialMeta>> {
    Ok(d.engine.credential_map().values().cloned().collect())
}

/// Puts a secret in the keychain.
#[tauri::command]
pub async fn add_credential(
    d: State<'_, Desktop>,
    name: String,
    scheme: String,
    hosts: Vec<String>,
    secret: String,
) -> Res<assent_core::credentials::CredentialMeta> {
    Ok(d.engine.add_credential(&name, &scheme, &hosts, secret).await?)
}

/// Removes a credential.
#[tauri::command]
pub async fn remove_credential(d: State<'_, Desktop>, name: String) -> Res<()> {
    Ok(d.engine.remove_credential(&name).await?)
}

/// What the settings page shows.
#[tauri::command]
pub async fn app_info(d: State<'_, Desktop>) -> Res<Value> {
    let mut info = d.info.clone();
    info["notifications"] = Value::String(d.notifications.lock().unwrap_or_else(|e| e.into_inner()).clone());
    Ok(info)
}

/// How many proposals are pending.
#[tauri::command]
pub async fn pending_count(d: State<'_, Desktop>) -> Res<u64> {
    Ok(d.engine.pending_count().await?)
}

/// The front end's first inbox page is on screen, `first_page_ms` after it asked for it:
/// logged once, for the launch benchmark. The store's time for the page handed over with the
/// document counts too (`query_ms`), so the figure runs from asking the store to the screen.
#[tauri::command]
pub async fn ui_ready(d: State<'_, Desktop>, first_page_ms: Option<f64>) -> Res<()> {
    if !d.ready.swap(true, std::sync::atomic::Ordering::SeqCst) {
        d.painted.notify_one();
        let window_ms = first_page_ms.filter(|m| m.is_finite() && *m >= 0.0).unwrap_or(0.0);
        let query_ms = d.first_page_query.as_secs_f64() * 1000.0;
        let first_page_ms = window_ms + query_ms;
        tracing::info!(
            ms = d.started.elapsed().as_millis() as u64,
            first_page_ms,
            query_ms,
            window_ms,
            "inbox rendered"
        );
    }
    Ok(())
}

/// Whether Assent starts when the person logs in.
#[tauri::command]
pub fn get_autostart(app: tauri::AppHandle) -> Res<bool> {
    use tauri_plugin_autostart::ManagerExt;
    app.autolaunch().is_enabled().map_err(autostart_error)
}

/// Starts Assent at login (in the tray), or stops doing so; answers the new state.
#[tauri::command]
pub fn set_autostart(app: tauri::AppHandle, enabled: bool) -> Res<bool> {
    use tauri_plugin_autostart::ManagerExt;
    let launch = app.autolaunch();
    if enabled { launch.enable() } else { launch.disable() }.map_err(autostart_error)?;
    let now = launch.is_enabled().map_err(autostart_error)?;
    tracing::info!(enabled = now, "start at login changed");
    Ok(now)
}

fn autostart_error(e: tauri_plugin_autostart::Error) -> CmdError {
    CmdError { code: "autostart_failed".into(), message: format!("could not change the login items: {e}") }
}

/// Quits Assent after the person confirmed it (the tray's Quit asks while agents wait).
#[tauri::command]
pub fn quit_app(app: tauri::AppHandle) {
    tracing::info!("quit from the window");
    app.exit(0);
}

impl From<assent_remote::ControlError> for CmdError {
    fn from(e: assent_remote::ControlError) -> Self {
        use assent_remote::ControlError as E;
        let code = match &e {
            E::Core(_) => "",
            E::Origin(_) => "invalid_origin",
            E::Ntfy(_) => "invalid_ntfy",
            E::PushAfter => "invalid_push_after",
            E::Bind { .. } => "remote_port_busy",
            E::Disabled => "remote_disabled",
            E::Busy => "remote_busy",
            E::Save(_) => "internal",
        };
        match e {
            E::Core(c) => c.into(),
            e => CmdError { code: code.into(), message: e.to_string() },
        }
    }
}

/// The remote listener: on or off, its origin, where it listens, the devices.
#[tauri::command]
pub async fn remote_status(d: State<'_, Desktop>) -> Res<assent_remote::Status> {
    Ok(d.remote.status().await?)
}

/// Turns the remote listener on (or changes its origin, port or when it pushes).
#[tauri::command]
pub async fn remote_enable(
    d: State<'_, Desktop>,
    origin: Option<String>,
    port: Option<u16>,
    push_after: Option<u64>,
) -> Res<assent_remote::Status> {
    Ok(d.remote.enable(assent_remote::Change { origin, port, push_after, ntfy: None }).await?)
}

/// Turns the remote listener off: every session ends.
#[tauri::command]
pub async fn remote_disable(d: State<'_, Desktop>) -> Res<assent_remote::Status> {
    Ok(d.remote.disable().await?)
}

/// A pairing code: its link and the link's QR code.
#[derive(Serialize)]
pub struct PairingShown {
    #[serde(flatten)]
    pairing: assent_remote::Pairing,
    qr: Option<assent_remote::Qr>,
}

/// A one-time pairing link for a phone, with its QR code.
#[tauri::command]
pub async fn remote_pair(d: State<'_, Desktop>, name: Option<String>) -> Res<PairingShown> {
    let pairing = d.remote.pair(name.as_deref().filter(|n| !n.is_empty())).await?;
    let qr = assent_remote::Qr::of(&pairing.link);
    Ok(PairingShown { pairing, qr })
}

/// The paired devices (never a passkey).
#[tauri::command]
pub async fn remote_devices(d: State<'_, Desktop>) -> Res<Vec<assent_core::remote::DeviceInfo>> {
    Ok(d.engine.devices().await?.iter().map(assent_core::remote::DeviceInfo::from).collect())
}

/// Revokes a device: its sessions end at once.
#[tauri::command]
pub async fn remote_revoke(d: State<'_, Desktop>, name: String) -> Res<()> {
    Ok(d.remote.revoke(&name).await?)
}
