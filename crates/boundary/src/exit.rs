//! Exit codes, and the error that decides one: what `assent` and `assent-run` end with.

/// Success; for waits: approved or applied.
pub const OK: u8 = 0;
/// Any error.
pub const ERROR: u8 = 1;
/// No server is running for the home.
pub const NOT_RUNNING: u8 = 3;
/// Rejected.
pub const REJECTED: u8 = 4;
/// Refined: the person wants changes.
pub const REFINED: u8 = 5;
/// Expired or withdrawn.
pub const EXPIRED: u8 = 6;
/// Approved but applying it failed.
pub const FAILED: u8 = 7;
/// Still pending when the wait ended.
pub const PENDING: u8 = 8;

/// The exit code of a wait that ended in `status`.
pub fn for_status(status: &str) -> u8 {
    match status {
        "approved" | "applied" => OK,
        "rejected" => REJECTED,
        "refined" => REFINED,
        "expired" | "withdrawn" => EXPIRED,
        "failed" => FAILED,
        _ => PENDING,
    }
}

/// An error that decides the exit code.
#[derive(Debug)]
pub struct ExitError {
    /// The code.
    pub code: u8,
    /// What to print (nothing if empty).
    pub message: String,
}

impl ExitError {
    /// An error with a message.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
    /// An exit code with nothing more to say.
    pub fn silent(code: u8) -> Self {
        Self { code, message: String::new() }
    }
}

impl std::fmt::Display for ExitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for ExitError {}

/// The exit code for how a command ended, its error said on standard error (`assent: ...`).
pub fn code(result: anyhow::Result<()>) -> u8 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            // A reader that stopped early (`assent list | head`) is not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return 0;
            }
            if let Some(x) = e.downcast_ref::<ExitError>() {
                if !x.message.is_empty() {
                    eprintln!("assent: {}", x.message);
                }
                return x.code;
            }
            eprintln!("assent: {e:#}");
            ERROR
        }
    }
}
