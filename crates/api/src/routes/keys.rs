//! The public keys that sign decisions' receipts: anyone may read them (`GET /v1/keys`), and the
//! owner starts a new one (`POST /v1/keys/rotate`).

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Owner;
use assent_core::store::ReceiptKey;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;

/// A JWK Set of the keys that sign receipts.
#[derive(Serialize, utoipa::ToSchema)]
pub struct KeySetDoc {
    /// Ed25519 keys as JWKs (`kty` OKP, `crv` Ed25519, `x`, `kid`, `alg` EdDSA, `use` sig): every
    /// node's current key, and keys retired while receipts they signed are still valid.
    pub keys: Vec<Value>,
}

/// A published key as a JWK, written by the receipt library that signs with it (its `kid`
/// computed from the key again, so a key is never published under another's name).
fn jwk(k: &ReceiptKey) -> Option<Value> {
    match assent_receipt::PublicKey::from_base64(&k.x) {
        Ok(pk) if pk.kid == k.kid => Some(pk.jwk()),
        _ => {
            tracing::error!(kid = %k.kid, "a stored receipt key is not the key its id names; it is not published");
            None
        }
    }
}

/// The public keys that sign decisions' receipts, as a JWK Set: anyone may read it, and with it
/// check a receipt offline. In a team it lists every node's keys.
#[utoipa::path(get, path = "/v1/keys", tag = "server", operation_id = "receipt_keys",
    responses((status = 200, description = "The JWK Set", body = KeySetDoc)))]
pub async fn list(State(s): State<AppState>) -> Result<axum::Json<KeySetDoc>, ApiError> {
    let keys = s.engine.receipt_keys().await?;
    Ok(axum::Json(KeySetDoc { keys: keys.iter().filter_map(jwk).collect() }))
}

/// A key that no longer signs, and until when it is published.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Retired {
    /// The key's id.
    pub kid: String,
    /// The node whose key it was, on a team store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Until when it is published (the last receipt it signed expires then).
    pub published_until: assent_core::time::Timestamp,
}

/// What a rotation did.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Rotated {
    /// The id of the key that signs from now on.
    pub kid: String,
    /// The keys published now, the new one among them.
    pub keys: Vec<Value>,
    /// The retired keys still published.
    pub retired: Vec<Retired>,
}

/// Starts a new receipt key on this server: it signs every receipt from now on, and the key
/// before it stays published until the last receipt it signed expires.
#[utoipa::path(post, path = "/v1/keys/rotate", tag = "server", operation_id = "rotate_receipt_key",
    security(("owner" = [])),
    responses((status = 200, description = "The new key signs", body = Rotated)))]
pub async fn rotate(State(s): State<AppState>, _: Owner) -> Result<axum::Json<Rotated>, ApiError> {
    let keys = s.engine.rotate_receipt_key().await?;
    let node = s.engine.config().node.clone();
    let kid =
        keys.iter().find(|k| k.publish_until.is_none() && k.node == node).map(|k| k.kid.clone()).unwrap_or_default();
    let retired = keys
        .iter()
        .filter_map(|k| {
            k.publish_until.map(|u| Retired { kid: k.kid.clone(), node: k.node.clone(), published_until: u })
        })
        .collect();
    Ok(axum::Json(Rotated { kid, keys: keys.iter().filter_map(jwk).collect(), retired }))
}
