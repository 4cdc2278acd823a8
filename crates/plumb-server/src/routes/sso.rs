//! Argo's single sign-on endpoints: `/auth/login` (to the provider, with state, nonce and
//! PKCE), `/auth/callback` (code exchange, ID token verified, the `argocd.token` cookie),
//! `/auth/logout` (cookie cleared, then the provider's logout) and `/api/dex/*`, proxied to the
//! bundled Dex. Outside the authentication layer: they are how a browser gets a session.
//! Answers are plain text: these are pages a browser shows, and nothing in them is markup.

use std::collections::HashMap;

use axum::Extension;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::session::SecureCookie;
use crate::auth::sso::state_cookie::{self, LoginState, STATE_COOKIE, STATE_MAX_AGE_SECS};
use crate::auth::sso::{Status, TOKEN_VERIFICATION_ERROR};
use crate::auth::token_cookie;
use crate::state::AppState;

/// Argo's answer to a return URL on another site.
const INVALID_RETURN_URL: &str = "Invalid redirect URL: the protocol and host (including port) must match and the path must be within allowed URLs if provided";

fn text(status: StatusCode, message: impl Into<String>) -> Response {
    let mut r = (status, message.into()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn redirect(to: &str, cookies: &[String]) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    for c in cookies {
        if let Ok(v) = HeaderValue::from_str(c) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn cookie(name: &str, value: &str, max_age: Option<i64>, secure: bool) -> String {
    let age = max_age
        .map(|a| format!("; Max-Age={a}"))
        .unwrap_or_default();
    format!("{name}={value}; {}{age}", token_cookie::attributes(secure))
}

fn read_cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// The provider, or what SSO answers when it cannot log anyone in.
fn not_ready(
    status: Status,
) -> Result<std::sync::Arc<crate::auth::sso::provider::Provider>, (StatusCode, String)> {
    match status {
        Status::Ready(p) => Ok(p),
        Status::Off => Err((
            StatusCode::NOT_FOUND,
            "single sign-on is not configured (no oidc.config or dex.config in argocd-cm)".into(),
        )),
        Status::Unavailable(why) => Err((
            StatusCode::SERVICE_UNAVAILABLE,
            format!("single sign-on is unavailable: {why}"),
        )),
    }
}

/// `GET /auth/login?return_url=`: to the provider's login page.
pub(crate) async fn login(
    State(s): State<AppState>,
    secure: Option<Extension<SecureCookie>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let (inputs, status) = match s.sso_now().await {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let p = match not_ready(status) {
        Ok(p) => p,
        Err((code, why)) => return text(code, why),
    };
    let url = p.settings.url.clone();
    let return_url = q.get("return_url").cloned().unwrap_or_default();
    if !state_cookie::valid_return_url(&return_url, &[&url]) {
        tracing::warn!("SSO login refused: return_url is not on this server");
        return text(StatusCode::BAD_REQUEST, INVALID_RETURN_URL);
    }
    let req = match p.login_request(&p.settings.redirect_url()) {
        Ok(r) => r,
        Err(e) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Failed to initiate login flow: {e}"),
            );
        }
    };
    let state = LoginState {
        state: req.state,
        nonce: req.nonce,
        pkce_verifier: req.pkce_verifier,
        return_url,
        expires: now() + STATE_MAX_AGE_SECS,
    };
    let sealed = match state_cookie::seal(&inputs.server_key, &state) {
        Ok(v) => v,
        Err(e) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Failed to initiate login flow: {e}"),
            );
        }
    };
    let secure = is_secure(secure, &url);
    redirect(
        &req.url,
        &[cookie(
            STATE_COOKIE,
            &sealed,
            Some(STATE_MAX_AGE_SECS),
            secure,
        )],
    )
}

fn is_secure(secure: Option<Extension<SecureCookie>>, url: &str) -> bool {
    secure.is_none_or(|Extension(v)| v.0) || url.starts_with("https://")
}

/// `GET /auth/callback?code=&state=`: the session cookie, and back where the login started.
pub(crate) async fn callback(
    State(s): State<AppState>,
    secure: Option<Extension<SecureCookie>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(error) = q.get("error") {
        let desc = q.get("error_description").map(String::as_str).unwrap_or("");
        let msg: String = format!("{error}: {desc}").chars().take(500).collect();
        tracing::warn!("SSO login failed at the identity provider: {msg}");
        return text(StatusCode::BAD_REQUEST, msg);
    }
    let (inputs, status) = match s.sso_now().await {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let p = match not_ready(status) {
        Ok(p) => p,
        Err((code, why)) => return text(code, why),
    };
    let secure = is_secure(secure, &p.settings.url);
    let clear_state = cookie(STATE_COOKIE, "", Some(0), secure);
    let refuse = |status: StatusCode, why: String| {
        tracing::warn!("SSO login refused: {why}");
        let mut r = text(status, why);
        if let Ok(v) = HeaderValue::from_str(&clear_state) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
        r
    };
    let (code, login) = match checked_login(&s, &inputs.server_key, &p.settings.url, &headers, &q) {
        Ok(v) => v,
        Err(why) => return refuse(StatusCode::BAD_REQUEST, why),
    };
    let redirect_url = p.settings.redirect_url();
    let tokens = match p
        .exchange(&redirect_url, &code, &login.pkce_verifier, &login.nonce)
        .await
    {
        Ok(t) => t,
        Err(why) if why.starts_with(TOKEN_VERIFICATION_ERROR) => {
            return refuse(StatusCode::UNAUTHORIZED, why);
        }
        Err(why) => return refuse(StatusCode::BAD_GATEWAY, why),
    };
    if p.settings.config.enable_user_info_groups
        && let Some(sub) = tokens.claims.get("sub").and_then(|v| v.as_str())
    {
        let exp = tokens
            .claims
            .get("exp")
            .and_then(|v| v.as_i64())
            .unwrap_or_default();
        s.sso_remember_access_token(sub, &tokens.access_token, exp);
    }
    s.sso_keep_session(&inputs.server_key, &tokens).await;
    let caller = crate::auth::sso_caller(p.issuer(), tokens.claims);
    tracing::info!(user = %caller.subject, groups = ?caller.groups, refresh = tokens.refresh_token.is_some(), "Web login successful");
    let back = if login.return_url.is_empty() {
        "/"
    } else {
        login.return_url.as_str()
    };
    let session =
        match token_cookie::set_cookies(&tokens.id_token, &token_cookie::attributes(secure)) {
            Ok(c) => c,
            Err(why) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, why),
        };
    let mut cookies = vec![clear_state.clone()];
    cookies.extend(session);
    redirect(back, &cookies)
}

/// The callback's code and the login it completes: the sealed state cookie of this browser,
/// its state equal to the callback's, not used before, its return URL on this server.
fn checked_login(
    s: &AppState,
    server_key: &[u8],
    url: &str,
    headers: &HeaderMap,
    q: &HashMap<String, String>,
) -> Result<(String, LoginState), String> {
    let (Some(code), Some(state)) = (q.get("code"), q.get("state")) else {
        return Err("the callback has no code or no state".into());
    };
    let Some(sealed) = read_cookie(headers, STATE_COOKIE) else {
        return Err(format!(
            "no {STATE_COOKIE} cookie: the login was not started in this browser, or it expired; log in again"
        ));
    };
    let login = state_cookie::open(server_key, &sealed, now())?;
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        login.state.as_bytes(),
        state.as_bytes(),
    )) {
        return Err(format!("invalid state in '{STATE_COOKIE}' cookie"));
    }
    if !s.sso_use_state(&login.state, login.expires, now()) {
        return Err("this login was already completed (replayed state); log in again".into());
    }
    if !state_cookie::valid_return_url(&login.return_url, &[url]) {
        return Err(INVALID_RETURN_URL.into());
    }
    Ok((code.clone(), login))
}

/// `GET /auth/logout`: the session cookie cleared; then the provider's logout (`logoutURL`, or
/// its end-session endpoint) for an SSO session, else this server's `url`.
pub(crate) async fn logout(
    State(s): State<AppState>,
    secure: Option<Extension<SecureCookie>>,
    headers: HeaderMap,
) -> Response {
    let token = token_cookie::join(&headers, crate::auth::token_cookie::max_token_bytes())
        .ok()
        .flatten()
        .unwrap_or_default();
    let (inputs, status) = match s.sso_now().await {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let url = inputs
        .cm
        .get("url")
        .map(|u| u.trim_end_matches('/').to_string())
        .unwrap_or_default();
    let back = if url.is_empty() {
        "/".to_string()
    } else {
        url.clone()
    };
    let secure = is_secure(secure, &url);
    let clear = token_cookie::clear_cookies(&headers, &token_cookie::attributes(secure));
    if !token.is_empty()
        && let Err(e) = s.sso_end_session(&token).await
    {
        tracing::warn!("logging out: the SSO session could not be ended: {e}");
    }
    let to = match status {
        Status::Ready(p)
            if !token.is_empty() && p.verify_with_current_keys(&token, None).is_ok() =>
        {
            p.logout_url(&token, &back).unwrap_or(back)
        }
        _ => back,
    };
    redirect(&to, &clear)
}

/// Headers not forwarded by a proxy (RFC 9110 section 7.6.1).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The largest answer relayed from Dex (its pages are a few KiB).
const MAX_DEX_ANSWER: usize = 4 * 1024 * 1024;

/// `/api/dex/*`: to the bundled Dex, as Argo's reverse proxy (when `dex.config` is set).
pub(crate) async fn dex_proxy(State(s): State<AppState>, req: Request) -> Response {
    let Some(auth) = s.auth.as_deref() else {
        return text(
            StatusCode::NOT_FOUND,
            "authentication is disabled on this server",
        );
    };
    match crate::auth::store::config_map(&s.client, &s.namespace, crate::state::SETTINGS_CONFIGMAP)
        .await
    {
        Ok(cm) if cm.get("dex.config").is_some_and(|d| !d.trim().is_empty()) => {}
        Ok(_) => {
            return text(
                StatusCode::NOT_FOUND,
                "Dex is not configured (no dex.config in argocd-cm)",
            );
        }
        Err(e) => return e.into_response(),
    }
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/api/dex");
    let target = format!("{}{path}", auth.sso.dex_server().trim_end_matches('/'));
    let body = match axum::body::to_bytes(body, 2 * 1024 * 1024).await {
        Ok(b) => b,
        Err(e) => return text(StatusCode::PAYLOAD_TOO_LARGE, e.to_string()),
    };
    let Some(client) = auth.sso.proxy_client() else {
        return text(StatusCode::BAD_GATEWAY, "no HTTP client for Dex");
    };
    let mut out = client.request(parts.method, &target).body(body);
    for (k, v) in &parts.headers {
        if k != header::HOST && !HOP_BY_HOP.contains(&k.as_str()) {
            out = out.header(k, v);
        }
    }
    let resp = match out.send().await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(
                "proxying to Dex at {}: {}",
                auth.sso.dex_server(),
                e.without_url()
            );
            return text(
                StatusCode::BAD_GATEWAY,
                format!("Dex at {} did not answer", auth.sso.dex_server()),
            );
        }
    };
    relay(resp).await
}

async fn relay(mut resp: reqwest::Response) -> Response {
    let mut out = Response::builder().status(resp.status());
    for (k, v) in resp.headers() {
        if !HOP_BY_HOP.contains(&k.as_str()) && k != header::CONTENT_LENGTH {
            out = out.header(k, v);
        }
    }
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(c)) if body.len() + c.len() <= MAX_DEX_ANSWER => body.extend_from_slice(&c),
            Ok(Some(_)) => return text(StatusCode::BAD_GATEWAY, "Dex's answer is too large"),
            Ok(None) => break,
            Err(e) => {
                return text(
                    StatusCode::BAD_GATEWAY,
                    format!("reading Dex's answer: {}", e.without_url()),
                );
            }
        }
    }
    out.body(Body::from(body))
        .unwrap_or_else(|e| text(StatusCode::BAD_GATEWAY, e.to_string()))
}
