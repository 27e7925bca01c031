//! Files inside a project that hold secrets a person would not show the model: environment
//! files, private keys, package registries' and hosts' logins. The built-in read-only rule does
//! not cover a read of one (the call asks), and the `read` box hides each one it finds (an empty
//! file in its place), so a pattern (`cat *`) or a program reading on its own reads nothing.
//!
//! A name is judged by its last component alone: the list is of names, each with why.

/// Names that are secrets wherever they are, exactly.
const NAMES: &[(&str, &str)] = &[
    (".env", "environment files hold API keys and database passwords"),
    (".netrc", "logins for hosts (curl, git, ftp)"),
    ("_netrc", "logins for hosts, as Windows names the file"),
    (".npmrc", "npm's registry tokens (`_authToken`)"),
    (".pypirc", "PyPI upload tokens"),
    (".git-credentials", "git's stored passwords and tokens"),
    (".htpasswd", "password hashes"),
    ("credentials.json", "cloud and OAuth client credentials"),
    ("credentials", "cloud credentials (`.aws/credentials`)"),
    ("service-account.json", "a cloud service account's private key"),
    ("id_rsa", "an SSH private key"),
    ("id_dsa", "an SSH private key"),
    ("id_ecdsa", "an SSH private key"),
    ("id_ed25519", "an SSH private key"),
    ("id_ecdsa_sk", "an SSH private key"),
    ("id_ed25519_sk", "an SSH private key"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"),
];

/// Endings of secret files' names.
const ENDINGS: &[(&str, &str)] = &[
    (".pem", "a certificate's private key, often"),
    (".key", "a private key"),
    (".p12", "a key store"),
    (".pfx", "a key store"),
    (".jks", "a Java key store"),
    (".keystore", "a key store"),
    (".kdbx", "a password database"),
    (".tfvars", "Terraform variables, often secrets"),
];

/// Environment files that are templates, not secrets (`.env.example`).
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist", "defaults", "schema"];

/// Why the file named `name` (its last component) is a secret; none when it is not.
pub fn why_secret(name: &str) -> Option<&'static str> {
    let name = name.rsplit(['/', '\\']).next().unwrap_or(name);
    if let Some((_, why)) = NAMES.iter().find(|(n, _)| *n == name) {
        return Some(why);
    }
    // `.env.local`, `.env.production`, but not `.env.example`.
    if let Some(rest) = name.strip_prefix(".env.") {
        let last = rest.rsplit('.').next().unwrap_or(rest);
        return (!ENV_TEMPLATES.contains(&last)).then_some("environment files hold API keys and database passwords");
    }
    let lower = name.to_ascii_lowercase();
    // A public key or certificate beside a private one is no secret.
    if lower.ends_with(".pub") || lower.ends_with(".crt") || lower.ends_with(".cer") {
        return None;
    }
    ENDINGS.iter().find(|(e, _)| lower.ends_with(e) && lower.len() > e.len()).map(|(_, why)| *why)
}

/// Whether the file named `name` is a secret (see [`why_secret`]).
pub fn is_secret(name: &str) -> bool {
    why_secret(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_by_name() {
        for s in [
            ".env",
            "app/.env",
            ".env.local",
            ".env.production.local",
            "server.pem",
            "tls/private.KEY",
            "id_ed25519",
            "/home/a/p/.npmrc",
            ".netrc",
            "prod.tfvars",
            "keys\\id_rsa",
        ] {
            assert!(is_secret(s), "{s}");
        }
        for s in [
            ".env.example",
            ".env.sample",
            ".env.local.example",
            "id_ed25519.pub",
            "README.md",
            "env.md",
            ".envrc",
            "cert.crt",
            "src/key.rs",
            ".key",
            "monkey",
            "keys",
        ] {
            assert!(!is_secret(s), "{s}");
        }
    }
}
