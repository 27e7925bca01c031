//! The box on macOS: the command under `sandbox-exec` with the policy [`super::seatbelt`] writes
//! for this run (the folder, its secrets hidden, its executable configuration kept, a private
//! temporary folder, no network), in an environment cut to the allow-list. What a `workspace`
//! command created of executable configuration is removed after, as on Linux. A box given hosts
//! reaches them through the same proxy as on Linux ([`super::net`]), listening on a loopback
//! port for the run, the one address its policy lets it reach, named to the command as
//! `HTTPS_PROXY` and `HTTP_PROXY`. Compiled for macOS in the test run; there is no Mac to run it
//! on.

use super::net::{PROXY_VARS, Proxy};
use super::seatbelt::{self, Policy};
use super::{Confine, Error, SANDBOX_EXEC, Spec, environment, folder_ok, found};
use std::ffi::OsString;
use std::process::{Command, ExitStatus};

/// Runs `spec` under Seatbelt and waits for it.
pub(crate) fn run(spec: &Spec) -> Result<ExitStatus, Error> {
    let cwd = std::fs::canonicalize(&spec.cwd)?;
    let home = dirs::home_dir();
    folder_ok(&cwd, home.as_deref()).map_err(Error::Folder)?;
    let found = found::found(&cwd, spec.profile)?;
    // Started before the policy is written: the policy names its port.
    let proxy = if spec.hosts.is_empty() { None } else { Some(Proxy::on_loopback(&spec.hosts)?) };
    let tmp = tempfile::Builder::new().prefix("assent-box-").tempdir()?;
    let tmp_real = std::fs::canonicalize(tmp.path())?;
    let policy = seatbelt::policy(&Policy {
        profile: spec.profile,
        cwd: cwd.clone(),
        tmp: tmp_real.clone(),
        reads: seatbelt::system_reads(home.as_deref()),
        hidden: found.secrets.clone(),
        protected: found.executable.clone(),
        proxy_port: proxy.as_ref().and_then(Proxy::port),
    });
    let mut env = environment(std::env::vars_os(), &tmp_real);
    if let Some(port) = proxy.as_ref().and_then(Proxy::port) {
        let url = format!("http://127.0.0.1:{port}");
        env.extend(PROXY_VARS.iter().map(|k| (OsString::from(k), OsString::from(&url))));
    }
    let (program, args) = spec.argv.split_first().ok_or_else(|| Error::Confine("no command to run".into()))?;
    let status = Command::new(SANDBOX_EXEC)
        .arg("-p")
        .arg(policy)
        .arg(program)
        .args(args)
        .current_dir(&cwd)
        .env_clear()
        .envs(env)
        .status()?;
    drop(proxy);
    if spec.profile == Confine::Workspace {
        found::remove_created(&cwd, &found.executable);
    }
    Ok(status)
}

/// Runs `spec` and exits with its code; returns only when nothing could be run, with why.
pub(crate) fn exec(spec: &Spec) -> Error {
    match run(spec) {
        Ok(status) => {
            use std::io::Write;
            let _ = std::io::stdout().flush();
            std::process::exit(status.code().unwrap_or(1))
        }
        Err(e) => e,
    }
}
