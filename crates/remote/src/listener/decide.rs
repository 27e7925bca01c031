//! Decisions from the phone: the options (a nonce, and the challenge derived from exactly what
//! is decided) and the answer (the challenge derived again from what is stored, verified with
//! the device's passkey as stored now, then the decision).

use super::{Body, Fail, Listener, Reading, Session, no_store, paired, passkey_fail, used};
use crate::access::{Door, Refusal};
use assent_core::engine::{BatchItem, BatchResult};
use assent_core::proposal::{Channel, DecisionRequest, Outcome};
use assent_core::remote::{Shown, challenge};
use assent_core::time::Timestamp;
use assent_core::{Actor, Engine, Status};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use webauthn_rs::prelude::PublicKeyCredential;

/// Most proposals one decision names.
pub const MOST_ITEMS: usize = 100;

/// One proposal a decision names, with the hash of the payload the phone showed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    id: String,
    payload_sha256: String,
}

/// What a decision says, the same in its options and in its answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Ask {
    items: Vec<Item>,
    outcome: Outcome,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    feedback: Option<String>,
    #[serde(default)]
    edits: Option<Value>,
}

/// The answer: the same decision, the nonce its challenge was derived with, and the assertion.
// Read from a map and split by hand: serde's flattening cannot refuse unknown fields.
#[derive(Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub(super) struct Signed {
    nonce: String,
    ask: Ask,
    credential: PublicKeyCredential,
}

impl TryFrom<Map<String, Value>> for Signed {
    type Error = String;

    fn try_from(mut m: Map<String, Value>) -> Result<Self, String> {
        let nonce = match m.remove("nonce") {
            Some(Value::String(n)) => n,
            Some(_) => return Err("`nonce` is the string the options gave".into()),
            None => return Err("missing field `nonce`".into()),
        };
        let credential = m.remove("credential").ok_or_else(|| "missing field `credential`".to_string())?;
        let credential = serde_json::from_value(credential).map_err(|e| format!("`credential`: {e}"))?;
        let ask = serde_json::from_value(Value::Object(m)).map_err(|e| e.to_string())?;
        Ok(Self { nonce, ask, credential })
    }
}

fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::Approve => "approve",
        Outcome::Reject => "reject",
        Outcome::Refine => "refine",
    }
}

impl Ask {
    /// What the challenge binds besides the proposals and the outcome: the reason, the
    /// feedback and the edits that were given, as one object.
    fn detail(&self) -> Option<Value> {
        let mut m = Map::new();
        if let Some(r) = &self.reason {
            m.insert("reason".into(), Value::String(r.clone()));
        }
        if let Some(f) = &self.feedback {
            m.insert("feedback".into(), Value::String(f.clone()));
        }
        if let Some(e) = &self.edits {
            m.insert("edits".into(), e.clone());
        }
        (!m.is_empty()).then_some(Value::Object(m))
    }

    fn check(&self) -> Result<(), Fail> {
        if self.items.is_empty() || self.items.len() > MOST_ITEMS {
            return Err(Fail::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_items",
                format!("a decision names 1 to {MOST_ITEMS} proposals"),
            ));
        }
        if self.edits.is_some() && self.items.len() != 1 {
            return Err(Fail::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_edits", "edits go with one proposal"));
        }
        Ok(())
    }

    /// The stored proposals it names: each one's id, status, and its payload's hash now (kept
    /// with it when it was filed: no payload is read or hashed, however large, however often a
    /// session asks).
    async fn stored(&self, engine: &Engine) -> Result<Vec<(String, Status, String)>, Fail> {
        let mut out = Vec::with_capacity(self.items.len());
        for item in &self.items {
            let r = engine.row(&item.id).await?;
            out.push((r.proposal.id, r.proposal.status, r.gist.payload_sha256));
        }
        Ok(out)
    }

    /// The challenge, derived from the stored proposals.
    fn challenge(&self, stored: &[(String, Status, String)], nonce: &[u8; 32]) -> Result<[u8; 32], Fail> {
        let shown: Vec<Shown<'_>> = stored.iter().map(|(id, _, h)| Shown { id, payload_sha256: h }).collect();
        challenge(&shown, outcome_str(self.outcome), self.detail().as_ref(), nonce)
            .map_err(|e| Fail::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_items", e.to_string()))
    }
}

pub(super) async fn decision_options(
    State(l): State<Arc<Listener>>,
    s: Session,
    _reading: Reading,
    Body(ask): Body<Ask>,
) -> Result<Response, Fail> {
    let now = Timestamp::now();
    l.access().check(&Door::Decide(s.key), now)?;
    ask.check()?;
    let stored = ask.stored(&l.engine).await?;
    for ((id, status, now_hash), item) in stored.iter().zip(&ask.items) {
        if *now_hash != item.payload_sha256 {
            return Err(Fail::new(
                StatusCode::CONFLICT,
                "payload_changed",
                format!("proposal `{id}` is not what this page showed: reload it"),
            ));
        }
        if *status != Status::Pending {
            return Err(Fail::new(
                StatusCode::CONFLICT,
                "invalid_state",
                format!("proposal `{id}` is {status}; only pending proposals can be decided"),
            ));
        }
    }
    let key = paired(&l.engine).await?.into_iter().find(|(n, _, _)| *n == s.device).map(|(_, _, k)| k);
    let Some(key) = key else {
        l.access().forget(&s.device);
        return Err(Fail::new(StatusCode::FORBIDDEN, "unknown_device", "this device was revoked"));
    };
    let nonce = l.access().nonce(&s.key, &s.device, now);
    let challenge = ask.challenge(&stored, &nonce)?;
    let options = l.passkeys.decision(&[key], &challenge).map_err(|e| passkey_fail(&e))?;
    Ok(no_store(axum::Json(json!({ "nonce": hex::encode(nonce), "options": options }))))
}

pub(super) async fn decide(
    State(l): State<Arc<Listener>>,
    s: Session,
    _reading: Reading,
    Body(signed): Body<Signed>,
) -> Result<Response, Fail> {
    let now = Timestamp::now();
    // Only this session's own failed decisions close its decisions; nobody else's do.
    let door = Door::Decide(s.key);
    l.access().check(&door, now)?;
    let ask = signed.ask;
    ask.check()?;
    // The nonce is spent here, whatever follows: an assertion is good for one try.
    let nonce: Option<[u8; 32]> = hex::decode(&signed.nonce).ok().and_then(|n| n.try_into().ok());
    let taken =
        nonce.ok_or(Refusal::UnknownNonce).and_then(|n| l.access().take_nonce(&n, &s.key, &s.device, now).map(|()| n));
    let nonce = match taken {
        Ok(n) => n,
        Err(r) => {
            let fail = Fail::from(r);
            l.refused(Some(&door), &s.device, "decision_refused", &fail).await;
            return Err(fail);
        }
    };
    let key = paired(&l.engine).await?.into_iter().find(|(n, _, _)| *n == s.device).map(|(_, _, k)| k);
    let Some(mut key) = key else {
        l.access().forget(&s.device);
        return Err(Fail::new(StatusCode::FORBIDDEN, "unknown_device", "this device was revoked"));
    };
    // Derived again from what is stored now and what this request says, and checked against
    // the device's passkey as stored now: the assertion verifies only if the phone signed
    // exactly this, and signed it after its last use.
    let stored = ask.stored(&l.engine).await?;
    let challenge = ask.challenge(&stored, &nonce)?;
    let result = match l.passkeys.verify(&signed.credential, std::slice::from_ref(&key), &challenge) {
        Ok(r) => r,
        Err(e) => {
            let fail = passkey_fail(&e);
            l.refused(Some(&door), &s.device, "decision_refused", &fail).await;
            return Err(fail);
        }
    };
    key.update_credential(&result);
    used(&l, &s.device, &key).await?;
    let actor = Actor { by: l.engine.person(Channel::Remote).by, channel: Channel::Remote, device: Some(s.device) };
    let items = ask
        .items
        .iter()
        .map(|i| BatchItem {
            id: i.id.clone(),
            decision: DecisionRequest {
                outcome: ask.outcome,
                reason: ask.reason.clone(),
                feedback: ask.feedback.clone(),
                edits: ask.edits.clone(),
                allow_similar: None,
                // The passkey signed the hash of the payload the phone showed.
                seen: Some(i.payload_sha256.clone()),
                // A phone approves a command in the box its preview names: running one
                // unconfined is chosen at the desktop only.
                run: None,
                hosts: None,
            },
        })
        .collect();
    let done: BatchResult = l.engine.decide_batch(&actor, items).await?;
    Ok(no_store(axum::Json(done)))
}
