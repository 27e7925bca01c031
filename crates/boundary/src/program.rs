//! The program a client runs for a hook or a confined run.

use std::path::PathBuf;

/// The runner's name: what a hook's command line and a rewritten call run.
pub const RUNNER: &str = "assent-run";

/// `assent-run` beside this binary where it is installed (it starts in a fraction of the time:
/// it does nothing else), else this binary.
pub fn program() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| "assent".into());
    let light = exe.with_file_name(format!("{RUNNER}{}", std::env::consts::EXE_SUFFIX));
    if light.is_file() { light } else { exe }
}
