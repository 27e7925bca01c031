//! `assent-run`: what a hook rewrites a confined call to. It does one thing, so it starts in a
//! fraction of the time the whole `assent` takes (no allocator of its own, no runtime, no
//! argument parser): it runs the approved command from the ticket the hook left, and hands
//! anything else (no ticket: the server is asked) to the `assent` beside it.

fn main() -> std::process::ExitCode {
    assent_cli::runner_main()
}
