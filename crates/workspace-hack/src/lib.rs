//! Assent's workspace-hack, managed by `cargo hakari` (see `.config/hakari.toml`): its
//! Cargo.toml names every third-party dependency with the union of the features any build of
//! the workspace asks for, and every member depends on it, so the tests, the PostgreSQL pass,
//! the package and the desktop app build each dependency once. No code.
//!
//! After changing dependencies: `cargo hakari generate && cargo hakari manage-deps`.
