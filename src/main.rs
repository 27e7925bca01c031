//! The `assent` binary. All of it lives in `crates/cli`; this file only hands over, so that the
//! black-box tests in `tests/` can run the real binary.

fn main() -> std::process::ExitCode {
    assent_cli::main()
}
