//! `plumb login SERVER`, `plumb relogin`, `plumb logout [CONTEXT]`, `plumb context [NAME]`:
//! sessions with `plumb server` kept in the config file, as `argocd
//! login/relogin/logout/context`; `--sso` logs in with the server's identity provider
//! ([`sso`]).

mod sso;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;

use super::remote::ServerClient;
use super::remote::config::{self, LocalConfig, Server};
use super::remote::sso::{display_name, unverified_claims};
use crate::exit::Outcome;

/// `plumb login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server, host:port.
    pub server: String,
    /// User name (prompted for when absent).
    #[arg(long)]
    pub username: Option<String>,
    /// Password (prompted for, without echo, when absent).
    #[arg(long, env = "PLUMB_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// Store this token instead of logging in with a password (an API key, a project token, a
    /// Kubernetes ServiceAccount token).
    #[arg(long, env = "PLUMB_AUTH_TOKEN", hide_env_values = true, conflicts_with_all = ["username", "password"])]
    pub auth_token: Option<String>,
    /// Log in with the server's identity provider (oidc.config or dex.config) in a browser.
    #[arg(long, conflicts_with_all = ["username", "password", "auth_token"])]
    pub sso: bool,
    #[command(flatten)]
    pub browser: SsoArgs,
    /// Skip verifying the server's certificate (its generated self-signed one).
    #[arg(long)]
    pub insecure: bool,
    /// Plain HTTP.
    #[arg(long)]
    pub plaintext: bool,
    /// Name of the context (default: the server).
    #[arg(long)]
    pub name: Option<String>,
    /// Config file (default: ~/.config/plumb/config).
    #[arg(long, env = "PLUMB_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// How an SSO login meets the browser.
#[derive(Debug, Args)]
pub struct SsoArgs {
    /// Port of the local callback server the identity provider sends the browser back to
    /// (http://localhost:PORT/auth/callback).
    #[arg(long, default_value_t = sso::DEFAULT_SSO_PORT, value_name = "PORT")]
    pub sso_port: u16,
    /// Open the system's browser on the login page; `=false` prints the URL instead (SSH
    /// sessions, headless machines).
    #[arg(
        long,
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub sso_launch_browser: bool,
    /// Log in with the device code flow (RFC 8628): print a URL and a code to enter in a
    /// browser on any machine, and wait (SSH sessions; no local callback port). Plumb's
    /// addition: Argo's CLI has no device flow.
    #[arg(long)]
    pub sso_device_code: bool,
}

impl SsoArgs {
    fn browser(&self) -> sso::Browser {
        sso::Browser {
            port: self.sso_port,
            launch: self.sso_launch_browser,
            device_code: self.sso_device_code,
        }
    }
}

/// `plumb relogin`.
#[derive(Debug, Args)]
pub struct ReloginArgs {
    /// Password, for a context logged in with one (prompted for, without echo, when absent).
    #[arg(long, env = "PLUMB_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    #[command(flatten)]
    pub browser: SsoArgs,
    /// Config file (default: ~/.config/plumb/config).
    #[arg(long, env = "PLUMB_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `plumb logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// Context to log out of (default: the current one).
    pub context: Option<String>,
    /// Config file (default: ~/.config/plumb/config).
    #[arg(long, env = "PLUMB_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `plumb context`.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Switch to this context; without it, list the contexts.
    pub name: Option<String>,
    /// Config file (default: ~/.config/plumb/config).
    #[arg(long, env = "PLUMB_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

fn prompt(label: &str) -> Result<String> {
    eprint!("{label}: ");
    std::io::stderr().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading from the terminal")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// Reads a password with echo off when stdin is a terminal.
pub(crate) fn prompt_password() -> Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).ok();
    if let Some(t) = &saved {
        let mut quiet = t.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        let _ = tcsetattr(&stdin, OptionalActions::Now, &quiet);
    }
    let answer = prompt("Password");
    if let Some(t) = &saved {
        let _ = tcsetattr(&stdin, OptionalActions::Now, t);
        eprintln!();
    }
    answer
}

/// A token checked by the server's userinfo before it is stored: who it names.
async fn check_token(client: &ServerClient) -> Result<String> {
    let info = client.get("/api/v1/session/userinfo").await?;
    if info.get("loggedIn").and_then(serde_json::Value::as_bool) != Some(true) {
        bail!("the server does not accept this token");
    }
    Ok(info["username"].as_str().unwrap_or_default().to_string())
}

/// `POST /api/v1/session`: the session token of a local account.
async fn password_login(client: &ServerClient, username: &str, password: &str) -> Result<String> {
    let answer = client
        .post(
            "/api/v1/session",
            &json!({"username": username, "password": password}),
        )
        .await?;
    Ok(answer
        .get("token")
        .and_then(serde_json::Value::as_str)
        .context("the server answered without a token")?
        .to_string())
}

/// What a login leaves: the token, the refresh token of an SSO login, and who logged in.
struct LoggedIn {
    token: String,
    refresh_token: Option<String>,
    who: String,
}

async fn login(args: &LoginArgs, client: &ServerClient) -> Result<LoggedIn> {
    if let Some(token) = &args.auth_token {
        let checking =
            ServerClient::new(&args.server, args.insecure, args.plaintext, token.clone())?;
        let who = check_token(&checking).await?;
        return Ok(LoggedIn {
            token: token.clone(),
            refresh_token: None,
            who,
        });
    }
    if args.browser.sso_device_code && !args.sso {
        bail!("--sso-device-code is a way to log in with --sso");
    }
    if args.sso {
        let tokens = sso::login(client, args.insecure, args.browser.browser()).await?;
        return Ok(LoggedIn {
            who: display_name(&tokens.claims),
            token: tokens.id_token,
            refresh_token: tokens.refresh_token,
        });
    }
    let username = match &args.username {
        Some(u) => u.clone(),
        None => prompt("Username")?,
    };
    let password = match &args.password {
        Some(p) => p.clone(),
        None => prompt_password()?,
    };
    Ok(LoggedIn {
        token: password_login(client, &username, &password).await?,
        refresh_token: None,
        who: username,
    })
}

pub fn run_login(args: LoginArgs) -> Result<Outcome> {
    let path = config::default_path(args.config.as_deref())?;
    let mut cfg = LocalConfig::load(&path)?;
    let client = ServerClient::new(&args.server, args.insecure, args.plaintext, String::new())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let done = runtime.block_on(login(&args, &client))?;
    let server = Server {
        server: client.server.clone(),
        insecure: args.insecure,
        plain_text: args.plaintext,
    };
    let name = args.name.clone().unwrap_or_else(|| server.server.clone());
    cfg.upsert(&name, server, &done.token);
    cfg.set_tokens(&name, &done.token, done.refresh_token.as_deref());
    cfg.save(&path)?;
    println!("'{}' logged in successfully", done.who);
    println!("Context '{name}' updated");
    Ok(Outcome::Success)
}

/// `plumb relogin`: the current context logged in again, with the password of its local
/// account (Argo's test: the token's issuer is `argocd`) or through SSO otherwise.
pub fn run_relogin(args: ReloginArgs) -> Result<Outcome> {
    let path = config::default_path(args.config.as_deref())?;
    let mut cfg = LocalConfig::load(&path)?;
    let name = cfg.current_context.clone();
    if name.is_empty() {
        bail!("no context found: log in with `plumb login SERVER`");
    }
    let ctx = cfg
        .context(&name)
        .cloned()
        .with_context(|| format!("context '{name}' undefined in {}", path.display()))?;
    let server = cfg.server(&ctx.server).cloned().unwrap_or_default();
    let claims = cfg
        .user(&ctx.user)
        .and_then(|u| unverified_claims(&u.auth_token))
        .with_context(|| {
            format!("context '{name}' holds no token to log in again with: log in with `plumb login {}`", ctx.server)
        })?;
    let client = ServerClient::new(
        &ctx.server,
        server.insecure,
        server.plain_text,
        String::new(),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (token, refresh_token) =
        if claims.get("iss").and_then(serde_json::Value::as_str) == Some("argocd") {
            let sub = claims
                .get("sub")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            let username = sub.split(':').next().unwrap_or_default().to_string();
            println!("Relogging in as '{username}'");
            let password = match args.password {
                Some(p) => p,
                None => prompt_password()?,
            };
            (
                runtime.block_on(password_login(&client, &username, &password))?,
                None,
            )
        } else {
            println!("Reinitiating SSO login");
            let tokens =
                runtime.block_on(sso::login(&client, server.insecure, args.browser.browser()))?;
            (tokens.id_token, tokens.refresh_token)
        };
    cfg.set_tokens(&ctx.user, &token, refresh_token.as_deref());
    cfg.save(&path)?;
    println!("Context '{name}' updated");
    Ok(Outcome::Success)
}

pub fn run_logout(args: LogoutArgs) -> Result<Outcome> {
    let path = config::default_path(args.config.as_deref())?;
    let mut cfg = LocalConfig::load(&path)?;
    let name = match args
        .context
        .or_else(|| Some(cfg.current_context.clone()).filter(|c| !c.is_empty()))
    {
        Some(n) => n,
        None => bail!("no context to log out of"),
    };
    // Revoke the session on the server too (best effort: the server may be gone).
    if let Some(ctx) = cfg.context(&name).cloned() {
        let s = cfg.server(&ctx.server).cloned().unwrap_or_default();
        let token = cfg
            .user(&ctx.user)
            .map(|u| u.auth_token.clone())
            .unwrap_or_default();
        if !token.is_empty()
            && let Ok(client) = ServerClient::new(&ctx.server, s.insecure, s.plain_text, token)
        {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            if let Err(e) = runtime.block_on(client.delete("/api/v1/session")) {
                tracing::debug!("revoking the session on {}: {e:#}", ctx.server);
            }
        }
    }
    cfg.logout(&name)?;
    cfg.save(&path)?;
    println!("Logged out from '{name}'");
    Ok(Outcome::Success)
}

pub fn run_context(args: ContextArgs) -> Result<Outcome> {
    let path = config::default_path(args.config.as_deref())?;
    let mut cfg = LocalConfig::load(&path)?;
    match args.name {
        Some(name) => {
            if cfg.context(&name).is_none() {
                bail!("context '{name}' undefined");
            }
            cfg.current_context = name.clone();
            cfg.save(&path)?;
            println!("Switched to context '{name}'");
        }
        None => {
            println!("{:<10}{:<30}SERVER", "CURRENT", "NAME");
            for c in &cfg.contexts {
                let mark = if c.name == cfg.current_context {
                    "*"
                } else {
                    ""
                };
                println!("{mark:<10}{:<30}{}", c.name, c.server);
            }
        }
    }
    Ok(Outcome::Success)
}
