//! Who holds a bearer token: the owner's hash and each active agent's, kept here alone. The
//! owner's hash is compared in constant time; an agent is found by the SHA-256 of its token, so
//! the time a lookup takes depends only on that hash, which tells nothing of any stored token
//! (finding a token for a given hash is what SHA-256 rules out), and not on how many agents there
//! are.

use super::Principal;
use crate::secret::{hashes_equal, token_hash};
use std::collections::HashMap;
use std::sync::RwLock;

/// The owner's token hash and the active agents' by hash.
pub(crate) struct Identities {
    owner: [u8; 32],
    agents: RwLock<HashMap<[u8; 32], String>>,
}

fn by_hash(agents: Vec<(String, [u8; 32])>) -> HashMap<[u8; 32], String> {
    agents.into_iter().map(|(name, hash)| (hash, name)).collect()
}

impl Identities {
    /// The owner's hash and the agents (name, token hash) the store holds.
    pub(crate) fn new(owner: [u8; 32], agents: Vec<(String, [u8; 32])>) -> Identities {
        Identities { owner, agents: RwLock::new(by_hash(agents)) }
    }

    /// Who holds `token`, if anyone.
    pub(crate) fn who(&self, token: &str) -> Option<Principal> {
        let h = token_hash(token);
        if hashes_equal(&h, &self.owner) {
            return Some(Principal::Owner);
        }
        let agents = self.agents.read().unwrap_or_else(|e| e.into_inner());
        agents.get(&h).map(|name| Principal::Agent(name.clone()))
    }

    /// The agents as the store holds them now (one was added, revoked or renamed).
    pub(crate) fn agents_now(&self, agents: Vec<(String, [u8; 32])>) {
        *self.agents.write().unwrap_or_else(|e| e.into_inner()) = by_hash(agents);
    }
}
