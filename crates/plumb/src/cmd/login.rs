//! `plumb login SERVER`, `plumb logout [CONTEXT]`, `plumb context [NAME]`: sessions with
//! `plumb server` kept in the config file, as `argocd login/logout/context`.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;

use super::remote::ServerClient;
use super::remote::config::{self, LocalConfig, Server};
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

pub fn run_login(args: LoginArgs) -> Result<Outcome> {
    let path = config::default_path(args.config.as_deref())?;
    let mut cfg = LocalConfig::load(&path)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (token, who) = runtime.block_on(async {
        if let Some(token) = &args.auth_token {
            // Check it before storing it.
            let client =
                ServerClient::new(&args.server, args.insecure, args.plaintext, token.clone())?;
            let info = client.get("/api/v1/session/userinfo").await?;
            if info.get("loggedIn").and_then(serde_json::Value::as_bool) != Some(true) {
                bail!("the server does not accept this token");
            }
            let who = info["username"].as_str().unwrap_or_default().to_string();
            return Ok((token.clone(), who));
        }
        let username = match &args.username {
            Some(u) => u.clone(),
            None => prompt("Username")?,
        };
        let password = match &args.password {
            Some(p) => p.clone(),
            None => prompt_password()?,
        };
        let client = ServerClient::new(&args.server, args.insecure, args.plaintext, String::new())?;
        let answer = client
            .post(
                "/api/v1/session",
                &json!({"username": username, "password": password}),
            )
            .await?;
        let token = answer
            .get("token")
            .and_then(serde_json::Value::as_str)
            .context("the server answered without a token")?
            .to_string();
        Ok((token, username))
    })?;
    let server = Server {
        server: ServerClient::new(&args.server, args.insecure, args.plaintext, String::new())?
            .server,
        insecure: args.insecure,
        plain_text: args.plaintext,
    };
    let name = args.name.clone().unwrap_or_else(|| server.server.clone());
    cfg.upsert(&name, server, &token);
    cfg.save(&path)?;
    println!("'{who}' logged in successfully");
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
