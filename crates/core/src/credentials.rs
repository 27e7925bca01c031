//! Credentials: named secrets the owner puts in the system keychain for Assent to inject into
//! approved HTTP calls. The core sees only their metadata; secrets are read at apply time
//! through a [`SecretSource`] and never stored, logged or returned.

use crate::error::CoreError;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// How a secret is put on a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", content = "header")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Scheme {
    /// `Authorization: Bearer <secret>`.
    Bearer,
    /// `Authorization: Basic base64(<secret>)`, the secret being `user:password`.
    Basic,
    /// `<name>: <secret>`.
    Header(String),
}

impl Scheme {
    /// Parses `bearer`, `basic` or `header:NAME`.
    pub fn parse(s: &str) -> Result<Self, CoreError> {
        match s {
            "bearer" => Ok(Scheme::Bearer),
            "basic" => Ok(Scheme::Basic),
            _ => match s.strip_prefix("header:") {
                Some(name) if valid_header_name(name) => Ok(Scheme::Header(name.to_ascii_lowercase())),
                _ => Err(CoreError::invalid("invalid_scheme", "a scheme is bearer, basic or header:NAME")),
            },
        }
    }

    /// The form [`Scheme::parse`] reads.
    pub fn label(&self) -> String {
        match self {
            Scheme::Bearer => "bearer".into(),
            Scheme::Basic => "basic".into(),
            Scheme::Header(n) => format!("header:{n}"),
        }
    }
}

/// Request headers Assent sets itself, never an agent (stored names are lower case): the
/// credential's, the connection's, the idempotency key, the decision's receipt.
pub const ASSENT_SETS: [&str; 10] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "idempotency-key",
    "upgrade",
    "assent-receipt",
];

/// A valid HTTP header name (RFC 9110 token, at most 128 characters).
pub fn valid_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// What SQLite keeps about a credential: never the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CredentialMeta {
    /// Its name, which proposals use.
    pub name: String,
    /// How it is put on a request.
    pub scheme: Scheme,
    /// The origins (`scheme://host:port`) it may be sent to.
    pub origins: Vec<String>,
    /// When it was added.
    pub created_at: Timestamp,
}

/// Why a secret could not be had or kept.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct SecretError(pub String);

/// Where secrets live (the system keychain). Every call may block.
pub trait SecretSource: Send + Sync {
    /// The secret of a credential.
    fn get(&self, credential: &str) -> Result<String, SecretError>;
    /// Stores (or replaces) it.
    fn set(&self, credential: &str, secret: &str) -> Result<(), SecretError>;
    /// Deletes it (missing is fine).
    fn delete(&self, credential: &str) -> Result<(), SecretError>;
}

/// Checks a credential name: 1-64 of `a-z 0-9 . _ -`.
pub fn validate_name(name: &str) -> Result<(), CoreError> {
    crate::names::validate_agent_name(name).map_err(|_| {
        CoreError::invalid(
            "invalid_credential_name",
            "a credential name is 1-64 characters of a-z, 0-9, '.', '_' and '-'",
        )
    })
}

/// True when an origin (`scheme://host:port`) is on loopback.
pub fn is_loopback_origin(origin: &str) -> bool {
    let host_port = origin.split("://").nth(1).unwrap_or("");
    let host = match host_port.rfind(':') {
        Some(i) => &host_port[..i],
        None => host_port,
    };
    is_loopback_host(host)
}

/// Normalizes an allowed host to an origin `scheme://host:port`. A bare host means HTTPS on
/// 443; `http://` is accepted only for loopback hosts.
pub fn normalize_origin(host: &str) -> Result<String, CoreError> {
    let bad = |m: String| CoreError::invalid("invalid_host", m);
    let with_scheme = if host.contains("://") { host.to_string() } else { format!("https://{host}") };
    let u = url::Url::parse(&with_scheme).map_err(|e| bad(format!("`{host}` is not a host: {e}")))?;
    if u.path() != "/" || u.query().is_some() || u.fragment().is_some() || !u.username().is_empty() {
        return Err(bad(format!("`{host}` must be a host (optionally scheme://host:port), without a path")));
    }
    let h = assent_commands::host::of_url(&u).ok_or_else(|| bad(format!("`{host}` has no host")))?;
    let h = h.as_str();
    match u.scheme() {
        "https" => {}
        "http" if is_loopback_host(h) => {}
        "http" => return Err(bad(format!("`{host}`: plain http is allowed only for loopback hosts"))),
        s => return Err(bad(format!("`{host}`: scheme {s} is not supported"))),
    }
    let port = u.port_or_known_default().ok_or_else(|| bad(format!("`{host}` has no port")))?;
    Ok(format!("{}://{}:{}", u.scheme(), h, port))
}

/// True for `localhost`, 127.0.0.0/8 and `[::1]`.
pub fn is_loopback_host(h: &str) -> bool {
    if h == "localhost" {
        return true;
    }
    let trimmed = h.trim_start_matches('[').trim_end_matches(']');
    trimmed.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
