//! `plumb account update-password`: Argo CD's `argocd account update-password` through
//! `plumb server` (`PUT /api/v1/account/password`). After changing its own password the
//! caller's session is no longer valid (the server refuses tokens older than the change), so,
//! as Argo's CLI, it logs in again with the new password and stores the new token in the
//! context.

use std::io::{BufRead, Write};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::remote::config::{self, LocalConfig};
use super::remote::{ServerClient, ServerFlags};
use crate::exit::Outcome;

/// `plumb account ...`.
#[derive(Debug, Args)]
pub struct AccountArgs {
    #[command(flatten)]
    server: ServerFlags,
    #[command(subcommand)]
    command: AccountCommand,
}

#[derive(Debug, Subcommand)]
enum AccountCommand {
    /// Change an account's password (your own by default).
    UpdatePassword(UpdatePasswordArgs),
}

/// `plumb account update-password`.
#[derive(Debug, Args)]
pub struct UpdatePasswordArgs {
    /// The account whose password changes (default: the logged-in one; another needs
    /// `accounts, update`).
    #[arg(long)]
    account: Option<String>,
    /// Your current password (prompted for when absent).
    #[arg(long, env = "PLUMB_CURRENT_PASSWORD", hide_env_values = true)]
    current_password: Option<String>,
    /// The new password (prompted for twice when absent).
    #[arg(long, env = "PLUMB_NEW_PASSWORD", hide_env_values = true)]
    new_password: Option<String>,
}

fn read_secret(label: &str) -> Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).ok();
    if let Some(t) = &saved {
        let mut quiet = t.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        let _ = tcsetattr(&stdin, OptionalActions::Now, &quiet);
    }
    eprint!("{label}: ");
    std::io::stderr().flush().ok();
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if let Some(t) = &saved {
        let _ = tcsetattr(&stdin, OptionalActions::Now, t);
        eprintln!();
    }
    read.context("reading from the terminal")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// Runs `plumb account ...`.
pub fn run(args: AccountArgs) -> Result<Outcome> {
    let Some(client) = ServerClient::from_flags(&args.server)? else {
        bail!("plumb account needs a plumb server: log in first (plumb login SERVER)");
    };
    let AccountCommand::UpdatePassword(a) = args.command;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(update_password(&client, &args.server, a))
}

async fn update_password(
    client: &ServerClient,
    flags: &ServerFlags,
    args: UpdatePasswordArgs,
) -> Result<Outcome> {
    let info = client.get("/api/v1/session/userinfo").await?;
    let me = info
        .get("username")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if info.get("loggedIn").and_then(Value::as_bool) != Some(true) {
        bail!("not logged in: plumb login {}", client.server);
    }
    let account = args.account.clone().unwrap_or_else(|| me.clone());
    let current = match args.current_password {
        Some(p) => p,
        None => read_secret(&format!(
            "*** Enter password of currently logged in user ({me})"
        ))?,
    };
    let new = match args.new_password {
        Some(p) => p,
        None => {
            let first = read_secret(&format!("*** Enter new password for user {account}"))?;
            let again = read_secret(&format!("*** Confirm new password for user {account}"))?;
            if first != again {
                bail!("passwords do not match");
            }
            first
        }
    };
    client
        .put(
            "/api/v1/account/password",
            &json!({"currentPassword": current, "newPassword": new, "name": account}),
        )
        .await?;
    println!("Password updated");
    if account != me {
        return Ok(Outcome::Success);
    }
    // Our session predates the change: log in again and keep the new token in the context.
    let answer = client
        .post("/api/v1/session", &json!({"username": me, "password": new}))
        .await?;
    let token = answer
        .get("token")
        .and_then(Value::as_str)
        .context("the server answered without a token")?;
    let path = config::default_path(flags.config.as_deref())?;
    let mut cfg = LocalConfig::load(&path)?;
    let Some(ctx) = cfg
        .contexts
        .iter()
        .find(|c| {
            c.server == client.server && (flags.server.is_some() || c.name == cfg.current_context)
        })
        .cloned()
    else {
        // A --server/--auth-token call without a stored context: nothing to update.
        return Ok(Outcome::Success);
    };
    let server = cfg.server(&ctx.server).cloned().unwrap_or_default();
    let current_context = cfg.current_context.clone();
    cfg.upsert(&ctx.name, server, token);
    cfg.current_context = current_context;
    cfg.save(&path)?;
    println!("Context '{}' updated", ctx.name);
    Ok(Outcome::Success)
}
