//! Platforms whose notification service Assent does not speak (not Linux, Windows or macOS):
//! nothing is shown, the inbox still gets every proposal, and `assent doctor` and the settings
//! page say so.

use crate::{Availability, Host, Options, ServiceInfo};
use assent_core::Engine;
use std::sync::Arc;

const NOT_BUILT: &str = "desktop notifications are not built for this platform yet";

/// Always an error here: there is no notification service Assent speaks.
pub async fn probe() -> Result<ServiceInfo, String> {
    Err(NOT_BUILT.into())
}

/// Shows nothing; says why.
pub async fn start(_engine: Engine, _host: Arc<dyn Host>, _opts: Options) -> Availability {
    tracing::warn!("{NOT_BUILT}: Assent works on without them");
    Availability::Unavailable(NOT_BUILT.into())
}

/// Not known here: false, so pushes to a phone keep their usual delay.
pub async fn screen_locked() -> bool {
    false
}
