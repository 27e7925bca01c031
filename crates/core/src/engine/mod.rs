//! The engine: the one entry point hosts (the headless server, the desktop app, the CLI when
//! no server runs) use. It authenticates callers, runs proposals through their kinds, moves
//! them through the status machine, publishes events and wakes waiters.

mod apply;
mod batch;
pub mod credentials;
mod decide;
pub mod devices;
mod envelope;
mod expiry;
mod identity;
pub mod lease;
mod ledger;
mod propose;
mod quota;
mod receipts;
mod rule_check;
pub mod rules;
mod sessions;
mod team;
mod wait;

pub use batch::{BatchItem, BatchItemResult, BatchResult, GroupDecision, ItemResult};
pub use decide::{Decided, REASON_MAX};
pub use propose::proposal_id_floor;
pub use quota::human as human_bytes;
pub use sessions::{MAX_BATCH, ProposedBatch, ProposedItem, SessionCounts};
pub use wait::{OnLost, WAITER_LOST};

use crate::credentials::SecretSource;
use crate::error::CoreError;
use crate::events::Event;
use crate::kinds::KindRegistry;
use crate::proposal::{AgentInfo, AuditEntry, Proposal};
use crate::secret::{new_token, token_hash};
use crate::store::{ListQuery, Store, Transition, Transitioned};
use crate::time::{Clock, Timestamp};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Limits and defaults. Hosts fill it from `config.toml`.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Seconds until a proposal expires when the agent does not say (24 h).
    pub default_expires_in: u64,
    /// The longest `expires_in` accepted (30 days).
    pub max_expires_in: u64,
    /// Pending proposals one agent may have at once.
    pub max_pending_per_agent: u32,
    /// Open waits one agent may have at once.
    pub max_waits_per_agent: u32,
    /// The longest single wait, in seconds.
    pub max_wait_secs: u64,
    /// Bytes of payloads and previews one agent may store in any 24 hours.
    pub max_bytes_per_agent_per_day: u64,
    /// How long a settled proposal's bulky content (payload, preview, response body) is kept,
    /// in seconds; its status, decision, audit trail and hashes are kept for ever.
    pub content_retention_secs: u64,
    /// This server's name on a team store (none on a store of its own). Proposals it receives
    /// carry it, and only it applies them.
    pub node: Option<String>,
    /// Who decides here: recorded on decisions and rules (`owner` on a store of one's own).
    pub person: String,
    /// The confinements this host can run a command under (`assent run`: the kernel enforces
    /// every layer). A rule that confines otherwise allows nothing: the call asks.
    pub can_confine: Vec<crate::confine::Confine>,
    /// The folders the person works in, absolute and normalized (empty: any project folder):
    /// a working folder outside them makes nothing "inside the folder" for the built-in rules.
    pub work_roots: Vec<String>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            default_expires_in: 24 * 3600,
            max_expires_in: 30 * 24 * 3600,
            max_pending_per_agent: 1000,
            max_waits_per_agent: 256,
            max_wait_secs: 120,
            max_bytes_per_agent_per_day: 512 * 1024 * 1024,
            content_retention_secs: 90 * 24 * 3600,
            node: None,
            person: "owner".into(),
            can_confine: Vec::new(),
            work_roots: Vec::new(),
        }
    }
}

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The person: may decide, sees everything.
    Owner,
    /// A named agent: may propose, sees only its own proposals, never decides.
    Agent(String),
}

impl Principal {
    /// The agent's name, if this is an agent.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Principal::Agent(a) => Some(a),
            Principal::Owner => None,
        }
    }

    /// A proposal as this principal may see it: whole for the person, reduced to its
    /// preview's figures for an agent ([`Proposal::for_agent`]).
    pub fn view(&self, p: Proposal) -> Proposal {
        match self {
            Principal::Owner => p,
            Principal::Agent(_) => p.for_agent(),
        }
    }
}

/// A person's identity on a decision: who and through which channel.
#[derive(Debug, Clone)]
pub struct Actor {
    /// `owner`, or a rule's name.
    pub by: String,
    /// The channel.
    pub channel: crate::proposal::Channel,
    /// The paired device that signed (channel `remote`).
    pub device: Option<String>,
}

/// A page of proposals.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page {
    /// The proposals, newest first.
    pub items: Vec<Proposal>,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

/// The cursor of the page after one of `n` rows, the last at `last`: none when the page was not
/// full (it was the last).
fn next_cursor(q: &ListQuery, last: Option<i64>, n: usize) -> Option<String> {
    if n as u32 == q.limit { last.map(|seq| seq.to_string()) } else { None }
}

pub(crate) struct Inner {
    /// The one path by which a proposal is filed and moved, and made known once committed.
    pub(crate) ledger: ledger::Ledger,
    pub(crate) kinds: KindRegistry,
    pub(crate) config: EngineConfig,
    /// The leases of pending proposals this node received.
    pub(crate) leases: lease::Leases,
    /// The time: leases, expiry and back-off read it and sleep on it.
    pub(crate) clock: Arc<Clock>,
    /// Whether the owner may move the clock (a test build started with `ASSENT_TEST_CLOCK`).
    movable_clock: bool,
    /// When the expiry sweeper looks next, and what wakes it.
    pub(crate) sweeper: expiry::Sweeper,
    /// Who holds a token.
    identities: identity::Identities,
    /// Applies running at once.
    pub(crate) apply_slots: tokio::sync::Semaphore,
    /// The credentials' metadata and the keychain their secrets are in.
    pub(crate) credentials: credentials::Credentials,
    pub(crate) usage: quota::Usage,
    /// The rules in force, and their changes one at a time.
    pub(crate) rules: rules::RuleBook,
    /// Who signs receipts, and how many times this node's key was rotated.
    pub(crate) signer: receipts::Signer,
}

/// What an engine is built from.
pub struct EngineParts {
    /// Storage.
    pub store: Arc<dyn Store>,
    /// The kinds it accepts.
    pub kinds: KindRegistry,
    /// Limits and defaults.
    pub config: EngineConfig,
    /// SHA-256 of the owner credential.
    pub owner_hash: [u8; 32],
    /// Where credentials' secrets live (none: credentials cannot be added).
    pub secrets: Option<Arc<dyn SecretSource>>,
    /// Who signs each decision's receipt (none: decisions carry no receipt).
    pub receipts: Option<Arc<dyn Receipts>>,
}

/// Signs a decision's receipt. The engine asks once per decision, as it records it; a host
/// holds the key (`crates/receipt` signs).
pub trait Receipts: Send + Sync {
    /// The receipt of a decision, as the domain states it (none if it cannot be made; the
    /// decision stands).
    fn issue(&self, decided: &crate::decided::Decided) -> Option<String>;
    /// The key that signs now: its id and its public half (base64url).
    fn current(&self) -> (String, String);
    /// Makes a new key the one that signs (kept where the old one was); the new key's id and
    /// public half.
    fn rotate(&self) -> Result<(String, String), String>;
    /// How long each receipt may be relied on, in seconds.
    fn ttl_secs(&self) -> i64;
}

/// The engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

pub use crate::names::validate_agent_name;

impl Engine {
    /// An engine from its parts.
    pub async fn new(parts: EngineParts) -> Result<Self, CoreError> {
        let EngineParts { store, kinds, config, owner_hash, secrets, receipts } = parts;
        let test_clock = crate::crash::test_clock();
        let clock = Arc::new(Clock::skewed(test_clock.unwrap_or(0)));
        let agents = store.agent_tokens().await?;
        let creds = store.credentials().await?.into_iter().map(|c| (c.name.clone(), c)).collect();
        let usage =
            quota::Usage::from_rows(store.stored_bytes_since(Timestamp(clock.now().0 - 24 * 3600 * 1000)).await?);
        let rules = rules::load(store.as_ref()).await?;
        let changes = store.take_changes();
        let engine = Self {
            inner: Arc::new(Inner {
                ledger: ledger::Ledger::new(store, 4096),
                kinds,
                config,
                leases: lease::Leases::new(clock.clone()),
                clock,
                movable_clock: test_clock.is_some(),
                sweeper: expiry::Sweeper::new(),
                identities: identity::Identities::new(owner_hash, agents),
                apply_slots: tokio::sync::Semaphore::new(8),
                credentials: credentials::Credentials::new(secrets, creds),
                usage,
                rules: rules::RuleBook::new(rules),
                signer: receipts::Signer::new(receipts),
            }),
        };
        if let Some(rx) = changes {
            Self::follow(Arc::downgrade(&engine.inner), rx);
        }
        engine.seed_builtin_rules().await;
        engine.resume_leases().await?;
        engine.publish_receipt_key().await?;
        Ok(engine)
    }

    /// The engine's clock.
    pub fn clock(&self) -> &Arc<Clock> {
        &self.inner.clock
    }

    /// The clock, when the owner may move it: a test build started with `ASSENT_TEST_CLOCK`
    /// (see [`crate::crash`]). Never in a release.
    pub fn movable_clock(&self) -> Option<&Arc<Clock>> {
        self.inner.movable_clock.then_some(&self.inner.clock)
    }

    /// Moves the clock forward by `by`, when the owner may move it ([`Engine::movable_clock`]),
    /// and returns once the expiry sweeper has looked at the new time (expired, withdrawn what
    /// lapsed), or after 5 seconds if no sweeper runs. False if the clock may not be moved.
    pub async fn move_clock(&self, by: std::time::Duration) -> bool {
        let Some(clock) = self.movable_clock() else { return false };
        let mut swept = self.inner.sweeper.swept();
        clock.advance(by);
        let target = clock.skew_ms();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), swept.wait_for(|s| *s >= target)).await;
        true
    }

    /// The current time on the engine's clock.
    pub(crate) fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// `decision` with its receipt, when this engine signs receipts: bound to `approved`, the
    /// approved payload as the engine holds it typed.
    pub(crate) fn with_receipt(
        &self,
        p: &Proposal,
        mut decision: crate::proposal::Decision,
        approved: Option<&crate::payloads::Payload>,
    ) -> crate::proposal::Decision {
        decision.receipt = self.inner.signer.issue(&crate::decided::Decided::of(p, &decision, approved));
        decision
    }

    /// The person deciding here, through `channel`.
    pub fn person(&self, channel: crate::proposal::Channel) -> Actor {
        Actor { by: self.inner.config.person.clone(), channel, device: None }
    }

    /// Whether this server carries out `p`: the node that received it does (every proposal
    /// does on a store of one's own).
    pub(crate) fn applies_here(&self, p: &Proposal) -> bool {
        self.is_here(&p.node)
    }

    /// Whether something that came through `node` came through this server (everything did,
    /// on a store of one's own).
    fn is_here(&self, node: &Option<String>) -> bool {
        node.is_none() || *node == self.inner.config.node
    }

    /// Whether the proposal `p` is agent `agent`'s own: its name, on this node (an agent's
    /// name is only good on the node it belongs to).
    pub fn belongs_to(&self, agent: &str, p: &crate::events::ProposalSummary) -> bool {
        p.agent == agent && self.is_here(&p.node)
    }

    /// The configuration in force.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// The kinds this engine accepts.
    pub fn kinds(&self) -> &KindRegistry {
        &self.inner.kinds
    }

    /// Who holds this bearer token, if anyone. The owner's hash is compared in constant time;
    /// an agent is found by the SHA-256 of the token, so the time a lookup takes depends only on
    /// that hash, which tells nothing of any stored token (finding a token for a given hash is
    /// what SHA-256 rules out), and not on how many agents there are.
    pub fn authenticate(&self, token: &str) -> Option<Principal> {
        self.inner.identities.who(token)
    }

    /// Subscribes to proposal events.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.ledger.subscribe()
    }

    /// Number of open waits.
    pub fn open_waits(&self) -> usize {
        self.inner.ledger.waiters().open()
    }

    /// Number of agents waiting on a decision right now (a long-poll open).
    pub fn agents_waiting(&self) -> usize {
        self.inner.ledger.waiters().agents_waiting()
    }

    /// A proposal the principal may see (agents: only their own; others are `not_found`).
    pub async fn get(&self, who: &Principal, id: &str) -> Result<Proposal, CoreError> {
        let p = self.inner.ledger.store().get(id).await?;
        match p {
            // An agent sees only its own, and its name is only good on the node it belongs to.
            Some(p) if who.agent().is_none_or(|a| a == p.agent && self.applies_here(&p)) => {
                if who.agent().is_some() {
                    // Its agent reading it is still there for the answer.
                    self.inner.leases.renew(&p.id);
                }
                Ok(who.view(p))
            }
            _ => Err(CoreError::NotFound(format!("no proposal `{}`", crate::kinds::clip(id, 80)))),
        }
    }

    /// The owner's view of one proposal as a list has it ([`crate::light::Listed`]): its status
    /// and its payload's hash, its payload not read (a decision's checks need no more).
    pub async fn row(&self, id: &str) -> Result<crate::light::Listed, CoreError> {
        self.inner
            .ledger
            .store()
            .get_row(id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("no proposal `{}`", crate::kinds::clip(id, 80))))
    }

    /// How many proposals are pending, of every agent (the owner's inbox badge and tray).
    pub async fn pending_count(&self) -> Result<u64, CoreError> {
        self.inner.ledger.store().count_pending().await
    }

    /// A page of proposals, newest first; agents see only their own.
    pub async fn list(&self, who: &Principal, q: ListQuery, cursor: Option<&str>) -> Result<Page, CoreError> {
        let q = self.page_query(who, q, cursor)?;
        let rows = self.inner.ledger.store().list(&q).await?;
        let next_cursor = next_cursor(&q, rows.last().map(|(seq, _)| *seq), rows.len());
        Ok(Page { items: rows.into_iter().map(|(_, p)| who.view(p)).collect(), next_cursor })
    }

    /// [`Engine::list`] as a list shows it: each proposal with its gist, its payload and
    /// preview not read (see [`crate::light`]).
    pub async fn list_rows(
        &self,
        who: &Principal,
        q: ListQuery,
        cursor: Option<&str>,
    ) -> Result<(Vec<crate::light::Listed>, Option<String>), CoreError> {
        let q = self.page_query(who, q, cursor)?;
        let rows = self.inner.ledger.store().list_rows(&q).await?;
        let next_cursor = next_cursor(&q, rows.last().map(|(seq, _)| *seq), rows.len());
        let items = rows
            .into_iter()
            .map(|(_, l)| crate::light::Listed { proposal: who.view(l.proposal), gist: l.gist })
            .collect();
        Ok((items, next_cursor))
    }

    /// `q` as `who` may ask it, from `cursor` on.
    fn page_query(&self, who: &Principal, mut q: ListQuery, cursor: Option<&str>) -> Result<ListQuery, CoreError> {
        if let Some(a) = who.agent() {
            q.agent = Some(a.to_string());
            q.node = self.inner.config.node.clone();
        }
        q.limit = q.limit.clamp(1, 500);
        q.before = match cursor {
            None | Some("") => None,
            Some(c) => Some(
                c.parse::<i64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| CoreError::invalid("invalid_cursor", "`cursor` is not one this server returned"))?,
            ),
        };
        Ok(q)
    }

    /// The audit trail of a proposal the principal may see.
    pub async fn audit_of(&self, who: &Principal, id: &str) -> Result<Vec<AuditEntry>, CoreError> {
        self.get(who, id).await?;
        self.inner.ledger.store().audit_for(id).await
    }

    /// Audit rows after `after_seq` (for export).
    pub async fn audit_after(&self, after_seq: i64, limit: u32) -> Result<Vec<AuditEntry>, CoreError> {
        self.inner.ledger.store().audit_after(after_seq, limit).await
    }

    /// Every agent (never their tokens).
    pub async fn agents(&self) -> Result<Vec<AgentInfo>, CoreError> {
        self.inner.ledger.store().agents().await
    }

    async fn reload_agents(&self) -> Result<(), CoreError> {
        let fresh = self.inner.ledger.store().agent_tokens().await?;
        self.inner.identities.agents_now(fresh);
        Ok(())
    }

    /// Adds a named agent and returns its token: shown once, stored only as a hash.
    pub async fn add_agent(&self, name: &str) -> Result<String, CoreError> {
        self.add_agent_with(name, false).await
    }

    /// [`Engine::add_agent`]; with `reuse`, a revoked agent's name gets a new token (its old
    /// proposals then sit under an agent that can propose again: so it must be asked for).
    pub async fn add_agent_with(&self, name: &str, reuse: bool) -> Result<String, CoreError> {
        validate_agent_name(name)?;
        let token = new_token("asnt");
        self.inner.ledger.store().add_agent(name, token_hash(&token), self.now(), reuse).await?;
        self.reload_agents().await?;
        Ok(token)
    }

    /// Makes `token` the token of agent `name` (used for the built-in `default` agent, whose
    /// token lives in the home's `agent.token`). False if that agent was revoked.
    pub async fn set_agent_token(&self, name: &str, token: &str) -> Result<bool, CoreError> {
        validate_agent_name(name)?;
        let ok = self.inner.ledger.store().set_agent_token(name, token_hash(token), self.now()).await?;
        self.reload_agents().await?;
        Ok(ok)
    }

    /// Revokes an agent's token at once. Its proposals stay for the person to decide.
    pub async fn revoke_agent(&self, name: &str) -> Result<(), CoreError> {
        if !self.inner.ledger.store().revoke_agent(name, self.now()).await? {
            return Err(CoreError::NotFound(format!("no active agent `{}`", crate::kinds::clip(name, 80))));
        }
        self.reload_agents().await
    }

    /// Writes status changes through the ledger and, once committed, announces them and does
    /// what follows from each.
    pub(crate) async fn commit(&self, ts: Vec<Transition>, atomic: bool) -> Result<Vec<Transitioned>, CoreError> {
        let committed = self.inner.ledger.transition(ts, atomic).await?;
        Ok(self.announce(committed))
    }

    /// Announces committed changes (the ledger wakes their waiters and publishes them) and does
    /// what follows from each.
    pub(crate) fn announce(&self, c: ledger::Committed) -> Vec<Transitioned> {
        let done = self.inner.ledger.announce(c);
        for t in &done {
            if let Transitioned::Done(p) = t {
                self.follow_up(p);
            }
        }
        done
    }

    /// What follows from a proposal's change, once it is known: while it is pending, its expiry
    /// is planned; after, it needs no lease; a write approved for this node is carried out.
    pub(crate) fn follow_up(&self, p: &Proposal) {
        if p.status == crate::status::Status::Pending {
            self.inner.sweeper.poke_if_before(p.expires_at.0);
        } else {
            self.inner.leases.forget(&p.id);
        }
        if p.status == crate::status::Status::Approved
            && p.class == crate::status::KindClass::Applied
            && self.applies_here(p)
        {
            self.spawn_apply(p.id.clone());
        }
    }
}
