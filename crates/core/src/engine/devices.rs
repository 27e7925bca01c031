//! Devices paired to answer from (a phone's passkey) and the remote listener's log: what the
//! remote listener and the owner's administration read and change through the engine.

use super::Engine;
use crate::error::CoreError;
use crate::remote::{Device, LogEntry};
use crate::time::Timestamp;
use serde_json::Value;

/// The longest device name, in characters.
pub const DEVICE_NAME_MAX: usize = 40;

/// Checks a device name as a person types it ("Anna's Pixel"): 1-40 letters, digits, spaces
/// and `' . _ -`, not starting or ending with a space, nothing invisible.
pub fn validate_device_name(name: &str) -> Result<(), CoreError> {
    let n = name.chars().count();
    let ok = (1..=DEVICE_NAME_MAX).contains(&n)
        && name.trim() == name
        && !crate::invisible::has_flagged(name)
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '\'' | '\u{2019}' | '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(CoreError::invalid(
            "invalid_device_name",
            format!(
                "a device name is 1-{DEVICE_NAME_MAX} letters, digits, spaces and ' . _ -, with no space at either end"
            ),
        ))
    }
}

impl Engine {
    /// This server's paired devices, revoked ones too, by name.
    pub async fn devices(&self) -> Result<Vec<Device>, CoreError> {
        self.inner.ledger.store().devices().await
    }

    /// Pairs a device (a revoked name may be paired again) and logs it.
    pub async fn pair_device(&self, device: Device) -> Result<(), CoreError> {
        validate_device_name(&device.name)?;
        let (name, at) = (device.name.clone(), device.added_at);
        self.inner.ledger.store().add_device(device).await?;
        self.remote_log(&name, "paired", at, None).await;
        Ok(())
    }

    /// Records a use of a device (its passkey as updated, and now); false if it is revoked or
    /// unknown.
    pub async fn device_used(&self, name: &str, passkey: &str) -> Result<bool, CoreError> {
        self.inner.ledger.store().device_used(name, passkey, self.now()).await
    }

    /// Sets or clears a paired device's Web Push subscription; false if it is revoked.
    pub async fn set_device_push(&self, name: &str, push: Option<&str>) -> Result<bool, CoreError> {
        self.inner.ledger.store().set_device_push(name, push).await
    }

    /// Revokes a paired device and logs it; `not_found` if none by that name is paired.
    pub async fn revoke_device(&self, name: &str) -> Result<(), CoreError> {
        let at = self.now();
        if !self.inner.ledger.store().revoke_device(name, at).await? {
            return Err(CoreError::NotFound(format!("no paired device `{}`", crate::kinds::clip(name, 80))));
        }
        self.remote_log(name, "revoked", at, None).await;
        Ok(())
    }

    /// Appends to the remote log (`device` '' when none is known). A failure to log is logged
    /// and does not fail what it records.
    pub async fn remote_log(&self, device: &str, event: &str, at: Timestamp, detail: Option<Value>) {
        if let Err(e) = self.inner.ledger.store().remote_log(device, event, at, detail).await {
            tracing::error!(error = %e, event, "could not write to the remote log");
        }
    }

    /// The remote log after position `after_seq`, oldest first.
    pub async fn remote_log_after(&self, after_seq: i64, limit: u32) -> Result<Vec<LogEntry>, CoreError> {
        self.inner.ledger.store().remote_log_after(after_seq, limit).await
    }
}

#[cfg(test)]
mod tests {
    use super::validate_device_name;

    #[test]
    fn a_device_name_is_what_a_person_types_and_nothing_hidden() {
        for ok in ["Pixel", "Anna's iPhone", "Anna\u{2019}s iPhone", "tablet-2", "Téléphone", "a"] {
            assert!(validate_device_name(ok).is_ok(), "{ok}");
        }
        let long = "x".repeat(41);
        for bad in ["", " pixel", "pixel ", "pi\u{200b}xel", "a/b", "a\nb", "<script>", long.as_str(), "a\u{202e}b"] {
            assert!(validate_device_name(bad).is_err(), "{bad:?}");
        }
    }
}
