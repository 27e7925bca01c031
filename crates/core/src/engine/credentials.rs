//! Credentials: the owner adds a secret straight into the keychain; only its name, scheme and
//! allowed origins reach the database.

use super::Engine;
use crate::credentials::{CredentialMeta, Scheme, validate_name};
use crate::error::CoreError;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

pub use crate::credentials::{is_loopback_host, normalize_origin};

/// The credentials' metadata as the store holds it, and the keychain their secrets are in: kept
/// here alone.
pub(crate) struct Credentials {
    secrets: Option<Arc<dyn crate::credentials::SecretSource>>,
    meta: RwLock<Arc<BTreeMap<String, CredentialMeta>>>,
}

impl Credentials {
    pub(crate) fn new(
        secrets: Option<Arc<dyn crate::credentials::SecretSource>>,
        meta: BTreeMap<String, CredentialMeta>,
    ) -> Credentials {
        Credentials { secrets, meta: RwLock::new(Arc::new(meta)) }
    }
}

impl Engine {
    /// The credentials' metadata, by name.
    pub fn credential_map(&self) -> Arc<BTreeMap<String, CredentialMeta>> {
        self.inner.credentials.meta.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    async fn reload_credentials(&self) -> Result<(), CoreError> {
        let fresh: BTreeMap<_, _> =
            self.inner.ledger.store().credentials().await?.into_iter().map(|c| (c.name.clone(), c)).collect();
        *self.inner.credentials.meta.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
        Ok(())
    }

    fn keychain(&self) -> Result<Arc<dyn crate::credentials::SecretSource>, CoreError> {
        self.inner.credentials.secrets.clone().ok_or_else(|| CoreError::Unavailable {
            code: "keychain_unavailable",
            message: "no system keychain is configured for credentials".into(),
        })
    }

    /// Stores `secret` in the keychain and the metadata in the database.
    pub async fn add_credential(
        &self,
        name: &str,
        scheme: &str,
        hosts: &[String],
        secret: String,
    ) -> Result<CredentialMeta, CoreError> {
        validate_name(name)?;
        let scheme = Scheme::parse(scheme)?;
        if hosts.is_empty() {
            return Err(CoreError::invalid("invalid_host", "name at least one host the credential may be sent to"));
        }
        let mut origins = hosts.iter().map(|h| normalize_origin(h)).collect::<Result<Vec<_>, _>>()?;
        origins.sort();
        origins.dedup();
        if secret.is_empty() || secret.chars().count() > 16 * 1024 || secret.contains(['\r', '\n', '\0']) {
            return Err(CoreError::invalid("invalid_secret", "a secret is 1 to 16384 characters on one line"));
        }
        if self.credential_map().contains_key(name) {
            return Err(CoreError::Conflict(format!("a credential named `{name}` already exists; remove it first")));
        }
        let kc = self.keychain()?;
        let (n, s) = (name.to_string(), secret);
        tokio::task::spawn_blocking(move || kc.set(&n, &s))
            .await
            .map_err(|e| CoreError::Unavailable { code: "keychain_unavailable", message: e.to_string() })?
            .map_err(|e| CoreError::Unavailable { code: "keychain_unavailable", message: e.to_string() })?;
        let meta = CredentialMeta { name: name.to_string(), scheme, origins, created_at: self.now() };
        self.inner.ledger.store().add_credential(meta.clone()).await?;
        self.reload_credentials().await?;
        Ok(meta)
    }

    /// Removes a credential from the keychain and the database.
    pub async fn remove_credential(&self, name: &str) -> Result<(), CoreError> {
        if !self.credential_map().contains_key(name) {
            return Err(CoreError::NotFound(format!("no credential `{}`", crate::kinds::clip(name, 80))));
        }
        let kc = self.keychain()?;
        let n = name.to_string();
        tokio::task::spawn_blocking(move || kc.delete(&n))
            .await
            .map_err(|e| CoreError::Unavailable { code: "keychain_unavailable", message: e.to_string() })?
            .map_err(|e| CoreError::Unavailable { code: "keychain_unavailable", message: e.to_string() })?;
        self.inner.ledger.store().remove_credential(name).await?;
        self.reload_credentials().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalized_and_plain_http_only_on_loopback() {
        assert_eq!(normalize_origin("api.example.com").ok().as_deref(), Some("https://api.example.com:443"));
        assert_eq!(
            normalize_origin("https://API.example.com:8443").ok().as_deref(),
            Some("https://api.example.com:8443")
        );
        assert_eq!(normalize_origin("http://127.0.0.1:9000").ok().as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(normalize_origin("http://localhost").ok().as_deref(), Some("http://localhost:80"));
        assert_eq!(normalize_origin("bücher.example").ok().as_deref(), Some("https://xn--bcher-kva.example:443"));
        for bad in ["http://api.example.com", "ftp://x", "https://x/path", "https://u@x", ""] {
            assert!(normalize_origin(bad).is_err(), "{bad}");
        }
    }
}
