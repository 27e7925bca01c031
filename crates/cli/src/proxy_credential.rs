//! `assent mcp proxy --url URL --credential NAME`: an HTTP MCP server's credential taken from
//! Assent's keychain when the proxy starts, never from the command line (where `ps` shows it)
//! or the client's settings (plain text beside the agent). The credential says how it is sent
//! and where it may go: the proxy sends it only to an origin it names.

use crate::client::Client;
use crate::home::Home;
use anyhow::{Context, Result, bail};
use assent_core::credentials::{SecretSource, normalize_origin};

/// The header that carries credential `name` to `url`: its scheme's, with the secret read from
/// the keychain; refused when the credential may not be sent to the URL's origin.
pub async fn header(home: &Home, name: &str, url: &str) -> Result<(String, String)> {
    let client = Client::owner(home).context("--credential: the credential's hosts are asked of the server")?;
    let all = client.api.credentials().await.map_err(|e| client.failed(e))?;
    let Some(meta) = all.into_iter().find(|c| c.name == name) else {
        bail!("--credential {name}: Assent holds no credential of that name (assent credential list)");
    };
    let parsed = reqwest::Url::parse(url).with_context(|| format!("--url {url:?}"))?;
    // Compared as the credential's hosts were kept: `scheme://host:port`.
    let origin =
        normalize_origin(&parsed.origin().ascii_serialization()).map_err(|e| anyhow::anyhow!("--url {url:?}: {e}"))?;
    if !meta.origins.contains(&origin) {
        bail!(
            "--credential {name} may be sent to {}, not to {origin} (assent credential add … --host names where)",
            meta.origins.join(", ")
        );
    }
    let keychain = assent_secrets::KeychainSecrets::for_home(&home.dir);
    let n = name.to_string();
    let secret = tokio::task::spawn_blocking(move || keychain.get(&n))
        .await
        .context("reading the keychain")?
        .map_err(|e| anyhow::anyhow!("--credential {name}: the system keychain did not give its secret ({e})"))?;
    Ok(assent_apply::http::credential_header(&meta.scheme, &secret))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use assent_apply::http::credential_header;
    use assent_core::credentials::{Scheme, normalize_origin};

    #[test]
    fn each_scheme_is_sent_as_the_applier_sends_it() {
        assert_eq!(credential_header(&Scheme::Bearer, "t0k"), ("authorization".into(), "Bearer t0k".into()));
        assert_eq!(credential_header(&Scheme::Basic, "u:p"), ("authorization".into(), "Basic dTpw".into()));
        assert_eq!(credential_header(&Scheme::Header("x-api-key".into()), "k"), ("x-api-key".into(), "k".into()));
    }

    #[test]
    fn the_origin_is_the_urls_scheme_host_and_port() {
        let o = |u: &str| normalize_origin(&reqwest::Url::parse(u).unwrap().origin().ascii_serialization()).unwrap();
        assert_eq!(o("https://api.example.com/mcp"), "https://api.example.com:443");
        assert_eq!(o("http://127.0.0.1:8080/mcp?x=1"), "http://127.0.0.1:8080");
    }
}
