//! Proposing: validate the envelope, let the kind validate and preview the payload, store it
//! once, announce it.

use super::Engine;
use super::envelope::{Envelope, REF_MAX, envelope, refuse_beyond_i_json};
use crate::error::CoreError;
use crate::kinds::{PrepareCtx, Prepared, clip};
use crate::proposal::{NewProposal, Proposal};
use crate::secret::{base32, random_bytes};
use crate::status::Status;
use crate::store::{Idempotency, Inserted, NewRecord};
use crate::time::Timestamp;
use serde_json::Value;

const IDEMPOTENCY_KEY_MAX: usize = 200;
/// How many times the rules decide a proposal whose rules changed as it was filed, before it
/// waits for the person instead.
const RULE_TRIES: u32 = 3;

/// A fresh proposal id for a proposal created at `at`: `p_`, the creation time in
/// milliseconds as 9 sortable base32 digits, then 128 random bits in base32.
///
/// The random bits make it unguessable. The time prefix makes ids of new proposals sort after
/// older ones, so the unique index on `id` (and the audit log's index on it) grows at its end:
/// a batch of new proposals dirties one or two index pages instead of one page per proposal,
/// which is most of what a durable commit writes.
pub fn new_proposal_id(at: Timestamp) -> String {
    let mut id = proposal_id_floor(at);
    id.push_str(&base32(&random_bytes::<16>()));
    id
}

/// The least id a proposal created at `at` or later can have: `id >= floor` finds the
/// proposals of a time window through the index on ids.
pub fn proposal_id_floor(at: Timestamp) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let ms = at.0.max(0) as u64;
    let mut id = String::with_capacity(2 + 9 + 26);
    id.push_str("p_");
    for i in (0..9).rev() {
        id.push(DIGITS[((ms >> (5 * i)) & 31) as usize] as char);
    }
    id
}

/// What a `propose` call did.
#[derive(Debug, Clone)]
pub struct Proposed {
    /// The proposal.
    pub proposal: Proposal,
    /// False when an idempotent retry returned an earlier proposal.
    pub created: bool,
}

impl Engine {
    /// Lets `kind` validate and preview a payload `agent` sent, off the async workers when the
    /// kind touches the file system or network.
    pub(super) async fn prepare(
        &self,
        kind: &std::sync::Arc<dyn crate::kinds::Kind>,
        agent: &str,
        payload: Value,
    ) -> Result<Prepared, CoreError> {
        let ctx = PrepareCtx {
            agent: agent.to_string(),
            credentials: self.credential_map(),
            can_box: self.inner.config.can_confine.clone(),
        };
        if !kind.blocking() {
            return kind.prepare(payload, &ctx);
        }
        let k = kind.clone();
        tokio::task::spawn_blocking(move || k.prepare(payload, &ctx))
            .await
            .map_err(|e| CoreError::invalid("invalid_payload", format!("could not prepare the payload: {e}")))?
    }

    /// Files a proposal for `agent`, as the route read it. `idempotency_key` makes retries safe.
    /// The proposal comes back as the agent may see it ([`Proposal::for_agent`]).
    pub async fn propose(
        &self,
        agent: &str,
        req: NewProposal,
        idempotency_key: Option<&str>,
    ) -> Result<Proposed, CoreError> {
        self.propose_as(agent, req, idempotency_key, None).await
    }

    /// [`Engine::propose`], filed by someone else on the agent's behalf (the person retrying a
    /// failed write): the audit trail credits `origin`, not the agent.
    pub(crate) async fn propose_as(
        &self,
        agent: &str,
        mut req: NewProposal,
        idempotency_key: Option<&str>,
        origin: Option<(String, crate::proposal::Channel)>,
    ) -> Result<Proposed, CoreError> {
        let idempotency = idempotency_key.map(|k| idempotency(k, &req)).transpose()?;
        let cfg = &self.inner.config;
        let Envelope { expires_in, lease_secs, title, summary, session_id, group_id, supersedes, audience } =
            envelope(&mut req, cfg)?;

        let kind = self.inner.kinds.get(&req.kind)?.clone();
        refuse_beyond_i_json(&req.payload, "payload")?;
        let Prepared { payload: typed, base, preview } = self.prepare(&kind, agent, req.payload).await?;

        let now = self.now();
        let mut proposal = Proposal {
            id: new_proposal_id(now),
            kind: kind.name(),
            agent: agent.to_string(),
            node: self.inner.config.node.clone(),
            title,
            summary,
            payload: typed.clone().into(),
            preview,
            base,
            session_id,
            group_id,
            supersedes: supersedes.map(|s| clip(&s, REF_MAX)),
            status: Status::Pending,
            settled: false,
            created_at: now,
            updated_at: now,
            expires_at: now.plus_secs(expires_in),
            lease_secs,
            audience,
            decision: None,
            approved_payload: None,
            result: None,
            error: None,
            pruned_at: None,
            class: kind.class(),
        };
        proposal.refresh_derived();
        // The rules decide now, before it is stored: an allowed or denied proposal is filed
        // already decided, in the same transaction, and is never pending. Should the rules
        // change before that transaction commits (here or on another node of a team), the store
        // refuses the decision and the rules then in force decide again; after a few changes
        // in a row, it waits for the person.
        let mut tries = 0;
        let inserted = loop {
            tries += 1;
            let (facts, rule, seq) = if tries <= RULE_TRIES {
                self.consult(agent, kind.as_ref(), &typed, now)
            } else {
                (kind.facts(&typed), None, 0)
            };
            let decided = rule
                .as_ref()
                .and_then(|(c, confine, hosts)| super::rules::rule_decision(c, *confine, hosts, &proposal, now))
                .map(|mut t| {
                    t.decision = t.decision.take().map(|d| self.with_receipt(&proposal, d, Some(&typed)));
                    t
                });
            // Serialized here, once, off the store's single writer: the quota counts these
            // bytes and the store writes them as they are.
            let stored = crate::stored::StoredJson::of(&proposal, &typed, &facts);
            let (bytes, at) = (stored.bytes(), proposal.created_at);
            self.inner.usage.reserve(agent, bytes, cfg.max_bytes_per_agent_per_day, at)?;
            let again = decided.is_some().then(|| proposal.clone());
            let rec = NewRecord {
                proposal,
                idempotency: idempotency.clone(),
                max_pending: cfg.max_pending_per_agent,
                origin: origin.clone(),
                stored,
                rules_seq: decided.is_some().then_some(seq),
                decided,
                rule: rule.map(|(c, _, _)| c.id),
            };
            let res = self.inner.ledger.insert(rec).await;
            if !matches!(res, Ok(Inserted::Created { .. })) {
                self.inner.usage.release(agent, bytes, at);
            }
            match (res, again) {
                (Err(CoreError::RulesChanged), Some(p)) => {
                    proposal = p;
                    if let Err(e) = self.reload_rules().await {
                        tracing::warn!(error = %e, "could not read the rules again");
                    }
                }
                (res, _) => break res,
            }
        };
        Ok(self.filed(inserted?))
    }

    /// A proposal the store took (or had under its idempotency key; the ledger told its news):
    /// its lease started, then what follows from it (an expiry sooner than the sweeper's next
    /// look, a write a rule approved started).
    fn filed(&self, inserted: Inserted) -> Proposed {
        match inserted {
            Inserted::Existing(p) => {
                self.lease(&p);
                Proposed { proposal: p.for_agent(), created: false }
            }
            Inserted::Created { proposal, superseded } => {
                self.lease(&proposal);
                if let Some(old) = superseded {
                    self.follow_up(&old);
                }
                self.follow_up(&proposal);
                Proposed { proposal: proposal.for_agent(), created: true }
            }
        }
    }
}

/// An `Idempotency-Key` checked, with the hash of the request it keys.
fn idempotency(key: &str, req: &NewProposal) -> Result<Idempotency, CoreError> {
    if key.is_empty() || key.len() > IDEMPOTENCY_KEY_MAX || !key.chars().all(|c| c.is_ascii_graphic()) {
        return Err(CoreError::invalid(
            "invalid_idempotency_key",
            format!("an Idempotency-Key is 1-{IDEMPOTENCY_KEY_MAX} visible ASCII characters"),
        ));
    }
    Ok(Idempotency { key: key.to_string(), request_sha256: req.sha256() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unguessable_and_sort_by_creation_time() {
        let t = Timestamp(1_795_000_000_000);
        let (a, b) = (new_proposal_id(t), new_proposal_id(t));
        assert_ne!(a, b, "the random part differs");
        assert_eq!(a.len(), 2 + 9 + 26);
        assert_eq!(a[..11], b[..11], "the same millisecond, the same prefix");
        assert!(a.starts_with("p_") && a[2..].chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        let later = new_proposal_id(Timestamp(t.0 + 1));
        assert!(later[..11] > a[..11]);
        let much_later = new_proposal_id(Timestamp(t.0 + 86_400_000 * 365));
        assert!(much_later > later);
        // Nine digits of five bits hold milliseconds for about a thousand years.
        assert!(new_proposal_id(Timestamp((1 << 45) - 1)) > much_later);
        // The floor of a time is below every id made then or later, above every id made before.
        let floor = proposal_id_floor(t);
        assert!(floor <= a && floor <= later && new_proposal_id(Timestamp(t.0 - 1)) < floor);
    }
}
