//! The remote listener's administration (owner credential): turning it on and off, pairing
//! codes, paired devices and the remote log. The listener itself is a separate port and a
//! separate door (`assent-remote`); none of these routes is on it.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Json, Owner, Query};
use assent_core::remote::{DeviceInfo, LogEntry};
use assent_remote::{ControlError, Pairing, Remote, Status};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

impl From<ControlError> for ApiError {
    fn from(e: ControlError) -> Self {
        let message = e.to_string();
        match e {
            ControlError::Core(c) => c.into(),
            ControlError::Origin(_) => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_origin", message),
            ControlError::Ntfy(_) => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_ntfy", message),
            ControlError::PushAfter => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_push_after", message),
            ControlError::Bind { .. } => ApiError::new(StatusCode::CONFLICT, "remote_port_busy", message),
            ControlError::Disabled => ApiError::new(StatusCode::CONFLICT, "remote_disabled", message),
            ControlError::Busy => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "remote_busy", message),
            ControlError::Save(_) => {
                tracing::error!(error = %message, "remote settings");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error; see the Assent log")
            }
        }
    }
}

fn remote(s: &AppState) -> Result<&Remote, ApiError> {
    s.remote.as_ref().ok_or_else(|| {
        ApiError::new(StatusCode::NOT_FOUND, "remote_unavailable", "this server has no remote listener to manage")
    })
}

/// Whether the remote listener is on, the origin it answers and where it listens.
#[utoipa::path(get, path = "/v1/remote", tag = "remote", operation_id = "remote_status",
    security(("owner" = [])),
    responses((status = 200, description = "The remote listener", body = Status)))]
pub async fn status(State(s): State<AppState>, _: Owner) -> Result<axum::Json<Status>, ApiError> {
    Ok(axum::Json(remote(&s)?.status().await?))
}

/// Body of `PUT /v1/remote`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Enable {
    /// The origin the phone opens: `https://HOST[:PORT]` with no path (the name of the tunnel
    /// that reaches this machine). Left out: the one set before.
    #[serde(default)]
    #[schema(example = "https://desk.example-tailnet.ts.net")]
    origin: Option<String>,
    /// The loopback port to listen on (left out: the one used before, else 4518; 0 picks a
    /// free one).
    #[serde(default)]
    port: Option<u16>,
    /// Seconds a proposal may wait before paired phones are pushed (0: at once; left out: as
    /// before, else 60; at most a day).
    #[serde(default)]
    #[schema(maximum = 86400)]
    push_after: Option<u64>,
    /// An ntfy topic to push to as well, `https://HOST/TOPIC` (`""` stops it; left out: as
    /// before). A push says how many proposals wait, nothing else.
    #[serde(default)]
    ntfy: Option<String>,
}

/// Turns the remote listener on (or moves it to another origin or port), at once.
#[utoipa::path(put, path = "/v1/remote", tag = "remote", operation_id = "remote_enable",
    security(("owner" = [])),
    request_body = Enable,
    responses((status = 200, description = "On", body = Status)))]
pub async fn enable(
    State(s): State<AppState>,
    _: Owner,
    Json(e): Json<Enable>,
) -> Result<axum::Json<Status>, ApiError> {
    let change =
        assent_remote::service::Change { origin: e.origin, port: e.port, push_after: e.push_after, ntfy: e.ntfy };
    Ok(axum::Json(remote(&s)?.enable(change).await?))
}

/// Turns the remote listener off: every session and pairing code ends.
#[utoipa::path(delete, path = "/v1/remote", tag = "remote", operation_id = "remote_disable",
    security(("owner" = [])),
    responses((status = 200, description = "Off", body = Status)))]
pub async fn disable(State(s): State<AppState>, _: Owner) -> Result<axum::Json<Status>, ApiError> {
    Ok(axum::Json(remote(&s)?.disable().await?))
}

/// Body of `POST /v1/remote/pairings`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPairing {
    /// The device's name, filled in on the phone (1-40 letters, digits, spaces and `' . _ -`).
    #[serde(default)]
    name: Option<String>,
}

/// A one-time pairing code (five minutes), as the link to open on the phone.
#[utoipa::path(post, path = "/v1/remote/pairings", tag = "remote", operation_id = "remote_pair",
    security(("owner" = [])),
    request_body = NewPairing,
    responses((status = 201, description = "The link; its code works once", body = Pairing)))]
pub async fn pair(
    State(s): State<AppState>,
    _: Owner,
    Json(p): Json<NewPairing>,
) -> Result<(StatusCode, axum::Json<Pairing>), ApiError> {
    Ok((StatusCode::CREATED, axum::Json(remote(&s)?.pair(p.name.as_deref()).await?)))
}

/// The paired devices.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeviceList {
    /// By name, revoked ones included.
    pub items: Vec<DeviceInfo>,
}

/// Every paired device (never a passkey).
#[utoipa::path(get, path = "/v1/remote/devices", tag = "remote", operation_id = "remote_devices",
    security(("owner" = [])),
    responses((status = 200, description = "The devices", body = DeviceList)))]
pub async fn devices(State(s): State<AppState>, _: Owner) -> Result<axum::Json<DeviceList>, ApiError> {
    let items = s.engine.devices().await?.iter().map(DeviceInfo::from).collect();
    Ok(axum::Json(DeviceList { items }))
}

/// Revokes a device: it can no longer log in or decide, and its sessions end now.
#[utoipa::path(delete, path = "/v1/remote/devices/{name}", tag = "remote", operation_id = "remote_revoke",
    security(("owner" = [])),
    params(("name" = String, Path, description = "The device's name")),
    responses((status = 204, description = "Revoked")))]
pub async fn revoke(State(s): State<AppState>, _: Owner, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    match &s.remote {
        Some(r) => r.revoke(&name).await?,
        None => s.engine.revoke_device(&name).await?,
    }
    Ok(StatusCode::NO_CONTENT)
}

/// A page of the remote log.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RemoteLogPage {
    /// In order.
    pub items: Vec<LogEntry>,
    /// When the page is full: the `after` to ask for next.
    pub next_after: Option<i64>,
}

/// The remote log in order: devices paired and revoked, the listener turned on and off, and
/// every refused attempt.
#[utoipa::path(get, path = "/v1/remote/log", tag = "remote", operation_id = "remote_log",
    security(("owner" = [])),
    params(super::LogQuery),
    responses((status = 200, description = "A page of the log", body = RemoteLogPage)))]
pub async fn log(
    State(s): State<AppState>,
    _: Owner,
    Query(q): Query<super::LogQuery>,
) -> Result<axum::Json<RemoteLogPage>, ApiError> {
    let (after, limit) = q.range();
    let items = s.engine.remote_log_after(after, limit).await?;
    let next_after = super::next_after(&items, limit, |e| e.seq);
    Ok(axum::Json(RemoteLogPage { items, next_after }))
}
