//! `plumb login --sso` and the renewal of its tokens, as `argocd login --sso` (Argo's
//! `oauth2Login`, `apiclient.OIDCConfig` and `refreshAuthToken`): the provider and client named
//! by the server's `GET /api/v1/settings`, a callback server on `localhost:--sso-port`, the
//! browser opened on the provider's login page (or the URL printed), the code exchanged with
//! PKCE, and the ID token (verified: signature, issuer, audience, nonce) stored with the
//! refresh token. The OIDC work is plumb-server's (`plumb_server::CliProvider`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Html;
use plumb_server::{CliLoginRequest, CliProvider, CliTokens};

use crate::cmd::remote::ServerClient;

/// Argo's `DefaultSSOLocalPort`.
pub(crate) const DEFAULT_SSO_PORT: u16 = 8085;
/// How long the callback server waits for the browser (Argo waits forever).
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// Callbacks answered before the login is given up (Argo's guard against redirect loops).
const MAX_CALLBACKS: usize = 2;
/// The longest piece of a provider's `error_description` shown.
const MAX_DESCRIPTION: usize = 300;

/// How the browser part of a login runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Browser {
    pub(crate) port: u16,
    pub(crate) launch: bool,
    /// RFC 8628's device code flow instead of the localhost callback.
    pub(crate) device_code: bool,
}

/// A whole login: the callback server, the browser, the code exchange.
pub(crate) async fn login(
    client: &ServerClient,
    insecure: bool,
    browser: Browser,
) -> Result<CliTokens> {
    let provider = client.sso_provider(insecure).await?;
    if browser.device_code {
        return device_login(&provider).await;
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", browser.port))
        .await
        .with_context(|| {
            format!(
                "listening on localhost:{} for the login's callback (choose another with --sso-port)",
                browser.port
            )
        })?;
    let redirect = format!("http://localhost:{}/auth/callback", browser.port);
    let request = provider
        .login_request(&redirect)
        .map_err(|e| anyhow!("{e}"))?;
    println!("Performing authorization_code flow login: {}", request.url);
    if browser.launch {
        open_browser(&request.url);
    } else {
        println!(
            "To authenticate, copy-and-paste the following URL into your preferred browser: {}",
            request.url
        );
    }
    let tokens = serve_callback(listener, provider, redirect, request).await?;
    println!("Authentication successful");
    Ok(tokens)
}

/// The device code flow: the URL and code printed (never opened here: the point is a browser
/// elsewhere), the provider polled until the login ends or the code expires.
async fn device_login(provider: &CliProvider) -> Result<CliTokens> {
    let login = provider.device_login().await.map_err(|e| anyhow!("{e}"))?;
    let url = login
        .verification_uri_complete
        .as_deref()
        .unwrap_or(&login.verification_uri);
    println!(
        "Performing device code flow login: enter the code {} at {}",
        printable(&login.user_code),
        printable(&login.verification_uri)
    );
    println!(
        "To authenticate, copy-and-paste the following URL into your preferred browser: {}",
        printable(url)
    );
    println!(
        "Waiting for the login (the code expires in {}s)",
        login.expires_in.as_secs()
    );
    let tokens = provider
        .device_tokens(&login, LOGIN_TIMEOUT.min(login.expires_in))
        .await
        .map_err(|e| anyhow!("{e}"))?;
    println!("Authentication successful");
    Ok(tokens)
}

/// Starts the system's browser on `url` (`open` on macOS, `xdg-open` elsewhere); the URL is
/// printed already, so a failure only says so.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    println!("Opening system default browser for authentication");
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        println!(
            "Could not start {opener} ({e}): to authenticate, copy-and-paste the URL above into your preferred browser"
        );
    }
}

/// What the callback handler shares: the login being waited for, and where its end goes.
struct Callback {
    provider: CliProvider,
    redirect: String,
    request: CliLoginRequest,
    seen: AtomicUsize,
    done: tokio::sync::Mutex<Option<tokio::sync::oneshot::Sender<Result<CliTokens, String>>>>,
}

/// Serves `/auth/callback` until one callback ends the login (or [`LOGIN_TIMEOUT`]).
async fn serve_callback(
    listener: tokio::net::TcpListener,
    provider: CliProvider,
    redirect: String,
    request: CliLoginRequest,
) -> Result<CliTokens> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let shared = Arc::new(Callback {
        provider,
        redirect,
        request,
        seen: AtomicUsize::new(0),
        done: tokio::sync::Mutex::new(Some(tx)),
    });
    let app = axum::Router::new()
        .route("/auth/callback", axum::routing::get(callback))
        .with_state(shared);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .into_future(),
    );
    let outcome = tokio::time::timeout(LOGIN_TIMEOUT, rx).await;
    let _ = stop.send(());
    // Let the last page reach the browser (Argo gives its server a second to shut down).
    let _ = tokio::time::timeout(Duration::from_secs(1), server).await;
    match outcome {
        Err(_) => bail!(
            "no login came back to localhost within {}s",
            LOGIN_TIMEOUT.as_secs()
        ),
        Ok(Err(_)) => bail!("the login's callback server stopped"),
        Ok(Ok(Err(why))) => bail!("{why}"),
        Ok(Ok(Ok(tokens))) => Ok(tokens),
    }
}

/// One callback from the browser: the provider's error, a state that is not this login's, or
/// a code to exchange. Pages and messages never show the code or a token.
async fn callback(
    State(cb): State<Arc<Callback>>,
    RawQuery(query): RawQuery,
) -> (StatusCode, Html<String>) {
    let params: Vec<(String, String)> =
        form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let param = |k: &str| {
        params
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let outcome = if cb.seen.fetch_add(1, Ordering::SeqCst) >= MAX_CALLBACKS {
        Err("unable to complete the login: too many callbacks".to_string())
    } else if let Some(error) = param("error") {
        let description = param("error_description").unwrap_or_default();
        Err(format!(
            "the identity provider refused the login: {}: {}",
            printable(error),
            printable(description)
        ))
    } else if param("state") != Some(cb.request.state.as_str()) {
        Err(
            "the callback's state is not this login's (a stale or forged callback); log in again"
                .to_string(),
        )
    } else if let Some(code) = param("code").filter(|c| !c.is_empty()) {
        cb.provider
            .exchange(
                &cb.redirect,
                code,
                &cb.request.pkce_verifier,
                &cb.request.nonce,
            )
            .await
    } else {
        Err("the callback has no code".to_string())
    };
    let page = match &outcome {
        Ok(_) => (
            StatusCode::OK,
            "<p>Authentication successful. You can close this window and return to the command line.</p>"
                .to_string(),
        ),
        Err(why) => (
            StatusCode::BAD_REQUEST,
            format!("<p>Login failed: {}</p>", escape(why)),
        ),
    };
    if let Some(tx) = cb.done.lock().await.take() {
        let _ = tx.send(outcome);
    }
    (
        page.0,
        Html(format!(
            "<!doctype html><title>plumb login</title>{}",
            page.1
        )),
    )
}

/// A provider's text, bounded and without control characters (it goes to a terminal).
fn printable(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .take(MAX_DESCRIPTION)
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_text_is_bounded_and_escaped() {
        assert_eq!(printable("a\u{1b}[31mb\n"), "a[31mb");
        assert_eq!(printable(&"x".repeat(1000)).len(), MAX_DESCRIPTION);
        assert_eq!(escape("<a href='x'>&"), "&lt;a href=&#39;x&#39;&gt;&amp;");
    }
}
