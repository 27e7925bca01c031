//! Records the commit this build comes from, for `assent --version` and the app's About:
//! `ASSENT_COMMIT` when the builder sets it (a build from a source archive), else the checkout's
//! `git rev-parse`, else "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

fn main() {
    println!("cargo:rerun-if-env-changed=ASSENT_COMMIT");
    let commit = match std::env::var("ASSENT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => {
            if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
                // A new commit or a checkout moves HEAD or the branch it names, kept loose or
                // in packed-refs. Only files that exist are watched: cargo takes a missing one
                // as changed, and would run this again (and rebuild the crate) on every build.
                let mut watched = vec![format!("{dir}/HEAD"), format!("{dir}/packed-refs")];
                if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
                    watched.push(format!("{dir}/{r}"));
                }
                for path in watched.iter().filter(|p| std::path::Path::new(p).exists()) {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
            git(&["rev-parse", "--short=7", "HEAD"]).unwrap_or_else(|| "unknown".into())
        }
    };
    println!("cargo:rustc-env=ASSENT_COMMIT={commit}");
}
