//! The CLI through `plumb server`: the config file with contexts ([`config`]), and a client of
//! the server's REST API (Argo CD's paths) with the token of the current context.

pub mod config;
pub(crate) mod sso;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use config::LocalConfig;

/// Flags selecting the server (shared by `plumb app` and `plumb logout`/`context`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerFlags {
    /// Config file with contexts (default: ~/.config/plumb/config).
    #[arg(long, global = true, env = "PLUMB_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Talk to this plumb server (host:port) instead of the current context's.
    #[arg(long, global = true, env = "PLUMB_SERVER", value_name = "HOST:PORT")]
    pub server: Option<String>,
    /// Token for the server (default: the context's, from `plumb login`).
    #[arg(
        long,
        global = true,
        env = "PLUMB_AUTH_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub auth_token: Option<String>,
    /// Skip verifying the server's certificate (its generated self-signed one).
    #[arg(long, global = true)]
    pub insecure: bool,
    /// Plain HTTP.
    #[arg(long, global = true)]
    pub plaintext: bool,
    /// Use the kubeconfig directly even when a context is set (core mode).
    #[arg(long, global = true)]
    pub core: bool,
}

/// A client of `plumb server`.
#[derive(Clone)]
pub struct ServerClient {
    http: reqwest::Client,
    /// `https://host:port`.
    base: String,
    /// `host:port` as given.
    pub server: String,
    token: String,
}

impl std::fmt::Debug for ServerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerClient")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Percent-encodes one path segment or query value.
pub fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl ServerClient {
    pub fn new(server: &str, insecure: bool, plaintext: bool, token: String) -> Result<Self> {
        let server = server
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let http = reqwest::Client::builder()
            .danger_accept_invalid_certs(insecure)
            .timeout(Duration::from_secs(300))
            .build()
            .context("building the HTTP client")?;
        let scheme = if plaintext { "http" } else { "https" };
        Ok(Self {
            http,
            base: format!("{scheme}://{server}"),
            server,
            token,
        })
    }

    /// The server mode the flags and config select, or `None` for core mode (kubeconfig).
    pub fn from_flags(flags: &ServerFlags) -> Result<Option<Self>> {
        if flags.core {
            return Ok(None);
        }
        let path = config::default_path(flags.config.as_deref())?;
        let mut cfg = LocalConfig::load(&path)?;
        // (server, insecure, plaintext, the context and user whose token is used)
        let (server, insecure, plaintext, owner) = match &flags.server {
            Some(server) => {
                let known = cfg.server(server);
                let owner = cfg
                    .contexts
                    .iter()
                    .find(|c| &c.server == server)
                    .map(|c| (c.name.clone(), c.user.clone()));
                (
                    server.clone(),
                    flags.insecure || known.is_some_and(|s| s.insecure),
                    flags.plaintext || known.is_some_and(|s| s.plain_text),
                    owner,
                )
            }
            None if flags.auth_token.is_some() && cfg.current_context.is_empty() => {
                bail!("--auth-token (PLUMB_AUTH_TOKEN) needs --server or a context (plumb login)")
            }
            None if cfg.current_context.is_empty() => return Ok(None),
            None => {
                let ctx = cfg.context(&cfg.current_context).ok_or_else(|| {
                    anyhow!(
                        "context '{}' undefined in {}",
                        cfg.current_context,
                        path.display()
                    )
                })?;
                let s = cfg.server(&ctx.server).cloned().unwrap_or_default();
                (
                    ctx.server.clone(),
                    flags.insecure || s.insecure,
                    flags.plaintext || s.plain_text,
                    Some((ctx.name.clone(), ctx.user.clone())),
                )
            }
        };
        let token = match (&flags.auth_token, owner) {
            (Some(t), _) => t.clone(),
            (None, None) => String::new(),
            (None, Some((context, user))) => fresh_token(
                &mut cfg,
                &Stored {
                    path: &path,
                    context: &context,
                    user: &user,
                    server: &server,
                    insecure,
                    plaintext,
                },
            )?,
        };
        Ok(Some(Self::new(&server, insecure, plaintext, token)?))
    }

    /// The identity provider the server's settings name (`plumb login --sso`, refresh).
    pub(crate) async fn sso_provider(&self, insecure: bool) -> Result<plumb_server::CliProvider> {
        let settings = self.get("/api/v1/settings").await?;
        sso::discover(&settings, &self.server, insecure).await
    }

    /// `https://host:port`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A request answered with any status: (status, JSON body or text).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value)> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if !self.token.is_empty() {
            req = req.bearer_auth(&self.token);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = req
            .send()
            .await
            .with_context(|| format!("{method} {}{path}", self.base))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .with_context(|| format!("reading the answer to {method} {path}"))?;
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status.as_u16(), value))
    }

    /// The error of an answer that is not a success, with the server's message.
    pub fn error(&self, status: u16, value: &Value) -> anyhow::Error {
        let msg = value
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| value.to_string());
        if status == 401 {
            return anyhow!(
                "{msg} (status 401: log in again with `plumb login {}`)",
                self.server
            );
        }
        anyhow!("{msg} (status {status})")
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value> {
        let (status, value) = self.call(method, path, body).await?;
        if !(200..300).contains(&status) {
            return Err(self.error(status, &value));
        }
        Ok(value)
    }

    pub async fn get(&self, path: &str) -> Result<Value> {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Value> {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Result<Value> {
        self.send(reqwest::Method::DELETE, path, None).await
    }

    /// A GET whose answer is read as it arrives (logs, watch streams); an error status is
    /// read whole and returned as the error.
    pub async fn stream(&self, path: &str) -> Result<reqwest::Response> {
        // A followed stream lasts as long as the user watches: no overall deadline.
        let mut req = self
            .http
            .get(format!("{}{path}", self.base))
            .timeout(Duration::from_secs(10 * 365 * 24 * 3600));
        if !self.token.is_empty() {
            req = req.bearer_auth(&self.token);
        }
        let resp = req
            .send()
            .await
            .with_context(|| format!("GET {}{path}", self.base))?;
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(resp);
        }
        let text = resp.text().await.unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Err(self.error(status, &value))
    }

    pub async fn put(&self, path: &str, body: &Value) -> Result<Value> {
        self.send(reqwest::Method::PUT, path, Some(body)).await
    }
}

/// Where the stored tokens of a context are, and how its server is reached.
struct Stored<'a> {
    path: &'a Path,
    context: &'a str,
    user: &'a str,
    server: &'a str,
    insecure: bool,
    plaintext: bool,
}

/// The token to call the server with: the stored one, or, when it has expired and a refresh
/// token is stored, a new one from the provider (saved with the rotated refresh token).
/// Runs the refresh on its own thread and runtime, as callers may be inside one or not.
fn fresh_token(cfg: &mut LocalConfig, at: &Stored<'_>) -> Result<String> {
    let Some(refresh_token) = sso::refresh_due(cfg, at.user) else {
        return Ok(cfg
            .user(at.user)
            .map(|u| u.auth_token.clone())
            .unwrap_or_default());
    };
    tracing::debug!(
        context = at.context,
        "the stored ID token has expired; refreshing it"
    );
    let renewed = std::thread::scope(|s| {
        s.spawn(|| -> Result<_> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let client =
                    ServerClient::new(at.server, at.insecure, at.plaintext, String::new())?;
                let provider = client.sso_provider(at.insecure).await?;
                provider
                    .refresh(&refresh_token)
                    .await
                    .map_err(|e| anyhow!("{e}"))
            })
        })
        .join()
    })
    .map_err(|_| anyhow!("refreshing the token stopped unexpectedly"))?;
    let tokens = renewed.map_err(|e| {
        anyhow!(
            "the session of context '{}' has expired and could not be renewed ({e:#}): run `plumb relogin`",
            at.context
        )
    })?;
    cfg.set_tokens(at.user, &tokens.id_token, tokens.refresh_token.as_deref());
    cfg.save(at.path)
        .with_context(|| format!("saving the renewed token of context '{}'", at.context))?;
    Ok(tokens.id_token)
}
