//! Wrappers: programs that run the command after their own options (`sudo`, `timeout`, `nice`,
//! ...), each with every option it takes, so that one it does not take makes the line opaque.

use super::opts::Spec;
use crate::effects::Effects;

/// A wrapper: a program that runs the command after its own options.
pub(super) struct Wrapper {
    /// Its options (any other makes the line opaque).
    pub(super) opts: Spec,
    /// Its options that make it something other than a plain wrapper (a look-up, a list, an
    /// editor, a shell).
    pub(super) not_plain: &'static [&'static str],
    /// Positional words it takes before the command (`timeout 10`).
    pub(super) positionals: usize,
    /// What it adds.
    pub(super) adds: Effects,
}

const fn spec(
    flags: &'static [&'static str],
    values: &'static [&'static str],
    optional: &'static [&'static str],
) -> Spec {
    Spec { flags, values, optional, numeric: false }
}

pub(super) fn wrapper(name: &str) -> Option<Wrapper> {
    let w = |opts, not_plain, positionals, adds| Some(Wrapper { opts, not_plain, positionals, adds });
    const NONE: &[&str] = &[];
    match name {
        "sudo" => w(
            spec(
                &[
                    "-A",
                    "--askpass",
                    "-b",
                    "--background",
                    "-B",
                    "--bell",
                    "-E",
                    "-H",
                    "--set-home",
                    "-n",
                    "--non-interactive",
                    "-P",
                    "--preserve-groups",
                    "-S",
                    "--stdin",
                    "-k",
                    "--reset-timestamp",
                    "-K",
                    "--remove-timestamp",
                    "-N",
                    "--no-update",
                    "-l",
                    "--list",
                    "-e",
                    "--edit",
                    "-s",
                    "--shell",
                    "-i",
                    "--login",
                    "-v",
                    "--validate",
                    "-V",
                    "--version",
                ],
                &[
                    "-u",
                    "--user",
                    "-g",
                    "--group",
                    "-C",
                    "--close-from",
                    "-D",
                    "--chdir",
                    "-h",
                    "--host",
                    "-p",
                    "--prompt",
                    "-r",
                    "--role",
                    "-t",
                    "--type",
                    "-U",
                    "--other-user",
                    "-T",
                    "--command-timeout",
                ],
                &["--preserve-env"],
            ),
            &["-l", "--list", "-e", "--edit", "-s", "--shell", "-i", "--login", "-v", "--validate", "-k", "-K"],
            0,
            Effects::PRIVILEGE,
        ),
        "doas" => w(spec(&["-n", "-s", "-L"], &["-u", "-C"], NONE), &["-s", "-L", "-C"], 0, Effects::PRIVILEGE),
        "nice" => w(Spec { numeric: true, ..spec(NONE, &["-n", "--adjustment"], NONE) }, NONE, 0, Effects::NONE),
        "ionice" => w(
            spec(
                &["-t", "--ignore"],
                &["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"],
                NONE,
            ),
            &["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
            0,
            Effects::NONE,
        ),
        "timeout" => w(
            spec(
                &["-v", "--verbose", "--foreground", "--preserve-status"],
                &["-s", "--signal", "-k", "--kill-after"],
                NONE,
            ),
            NONE,
            1,
            Effects::NONE,
        ),
        "nohup" | "noglob" | "builtin" | "catchsegv" => w(spec(NONE, NONE, NONE), NONE, 0, Effects::NONE),
        "unbuffer" => w(spec(&["-p"], NONE, NONE), NONE, 0, Effects::NONE),
        "caffeinate" => w(spec(&["-d", "-i", "-m", "-s", "-u"], &["-t", "-w"], NONE), NONE, 0, Effects::NONE),
        "time" => w(
            spec(&["-p", "--portability", "-v", "--verbose", "-q", "--quiet"], &["-f", "--format"], NONE),
            NONE,
            0,
            Effects::NONE,
        ),
        "command" => w(spec(&["-p", "-v", "-V"], NONE, NONE), &["-v", "-V"], 0, Effects::NONE),
        "exec" => w(spec(&["-c", "-l"], &["-a"], NONE), NONE, 0, Effects::NONE),
        "stdbuf" => w(spec(NONE, &["-i", "-o", "-e", "--input", "--output", "--error"], NONE), NONE, 0, Effects::NONE),
        "setsid" => w(spec(&["-c", "--ctty", "-f", "--fork", "-w", "--wait"], NONE, NONE), NONE, 0, Effects::NONE),
        "taskset" => w(
            spec(&["-a", "--all-tasks", "-c", "--cpu-list", "-p", "--pid"], NONE, NONE),
            &["-p", "--pid"],
            1,
            Effects::NONE,
        ),
        "chronic" => w(spec(&["-e", "-v"], NONE, NONE), NONE, 0, Effects::NONE),
        "ifne" => w(spec(&["-n"], NONE, NONE), NONE, 0, Effects::NONE),
        "pv" => w(spec(NONE, NONE, NONE), NONE, 0, Effects::NONE),
        _ => None,
    }
}
