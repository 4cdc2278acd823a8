//! `plumb proj role ...`: Argo's `argocd proj role` verbs. `create-token` needs `plumb server`
//! (tokens are signed with the server's key); every other verb works in core mode too.

mod edit;
mod show;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use jiff::tz::TimeZone;

use super::ProjClient;
use super::update::Change;
use crate::exit::Outcome;
use crate::output::{json, yaml};

/// `plumb proj role ...`.
#[derive(Debug, Args)]
pub struct RoleArgs {
    #[command(subcommand)]
    command: RoleCommand,
}

/// `PROJECT ROLE-NAME`.
#[derive(Debug, Args)]
pub struct RoleRef {
    /// Project name.
    project: String,
    /// Role name.
    role: String,
}

/// Argo's `addPolicyFlags`.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    #[command(flatten)]
    target: RoleRef,
    /// Action to grant/deny permission on (e.g. get, create, list, update, delete).
    #[arg(short = 'a', long, default_value = "")]
    action: String,
    /// Whether to allow or deny access to object with the action. This can only be 'allow' or
    /// 'deny'.
    #[arg(short = 'p', long, default_value = "allow")]
    permission: String,
    /// Object within the project to grant/deny access. Use '*' for a wildcard. Will want access
    /// to '<project>/<object>'.
    #[arg(short = 'o', long, default_value = "")]
    object: String,
    /// Resource e.g. 'applications', 'applicationsets', 'logs', 'exec', etc.
    #[arg(short = 'r', long, default_value = "applications")]
    resource: String,
}

/// `PROJECT ROLE-NAME GROUP-CLAIM`.
#[derive(Debug, Args)]
pub struct GroupArgs {
    #[command(flatten)]
    target: RoleRef,
    /// Group claim.
    group: String,
}

#[derive(Debug, Subcommand)]
enum RoleCommand {
    /// List all the roles in a project.
    List {
        /// Project name.
        project: String,
        /// Output format. One of: json|yaml|wide|name.
        #[arg(short = 'o', long, default_value = "wide")]
        output: String,
    },
    /// Get the details of a specific role.
    Get(RoleRef),
    /// Create a project role.
    Create {
        #[command(flatten)]
        target: RoleRef,
        /// Project description.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Delete a project role.
    Delete(RoleRef),
    /// Create a project token.
    #[command(alias = "token-create")]
    CreateToken {
        #[command(flatten)]
        target: RoleRef,
        /// Duration before the token will expire, e.g. "12h", "7d". (Default: No expiration)
        #[arg(short = 'e', long, default_value = "")]
        expires_in: String,
        /// Token unique identifier. (Default: Random UUID)
        #[arg(short = 'i', long, default_value = "")]
        id: String,
        /// Output token only - for use in scripts.
        #[arg(short = 't', long)]
        token_only: bool,
    },
    /// List tokens for a given role.
    #[command(aliases = ["list-token", "token-list"])]
    ListTokens {
        #[command(flatten)]
        target: RoleRef,
        /// Print timestamps as Unix time instead of converting. Useful for piping into
        /// delete-token.
        #[arg(short = 'u', long)]
        unixtime: bool,
    },
    /// Delete a project token.
    #[command(aliases = ["token-delete", "remove-token"])]
    DeleteToken {
        #[command(flatten)]
        target: RoleRef,
        /// Issued-at time of the token (`list-tokens -u`).
        issued_at: String,
    },
    /// Add a policy to a project role.
    AddPolicy(PolicyArgs),
    /// Remove a policy from a role within a project.
    RemovePolicy(PolicyArgs),
    /// Add a group claim to a project role.
    AddGroup(GroupArgs),
    /// Remove a group claim from a role within a project.
    RemoveGroup(GroupArgs),
}

/// Argo's `timeutil.ParseDuration`: a Go duration, or whole days (`7d`).
fn expires_in_seconds(text: &str) -> Result<i64> {
    if text.is_empty() {
        return Ok(0);
    }
    if let Some(days) = text.strip_suffix('d')
        && let Ok(n) = days.parse::<i64>()
    {
        return n.checked_mul(86_400).context("--expires-in: too long");
    }
    let d = plumb_model::go::duration::parse(text)
        .with_context(|| format!("--expires-in: invalid duration {text:?}"))?;
    let secs = d.to_std().map(|d| d.as_secs()).unwrap_or(0);
    i64::try_from(secs).context("--expires-in: too long")
}

fn print_note(note: Option<String>) {
    if let Some(n) = note {
        println!("{n}");
    }
}

/// Runs `plumb proj role ...`.
// length: one dispatch arm per Argo role verb, with the note each prints.
pub async fn run(client: &ProjClient, args: RoleArgs) -> Result<Outcome> {
    let tz = TimeZone::system();
    let mut note = None;
    match args.command {
        RoleCommand::List { project, output } => {
            let p = client.get(&project).await?;
            let roles = p.spec.roles.clone().unwrap_or_default();
            let text = match output.as_str() {
                "json" => json::render(&roles)?,
                "yaml" => yaml::render(&roles)?,
                "name" => roles.iter().map(|r| format!("{}\n", r.name)).collect(),
                "wide" | "" => show::roles_table(&roles),
                other => bail!("unknown output format: {other}"),
            };
            print!("{text}");
        }
        RoleCommand::Get(r) => {
            let p = client.get(&r.project).await?;
            let role = show::find(&p, &r.role)?;
            let now = jiff::Timestamp::now().as_second();
            print!("{}", show::role_detail(&p, role, &tz, now));
        }
        RoleCommand::Create {
            target,
            description,
        } => {
            let change = client
                .update(&target.project, |p| {
                    edit::create(p, &target.role, &description, &mut note)
                })
                .await?;
            print_note(note);
            if change == Change::Write {
                println!("Role '{}' created", target.role);
            }
        }
        RoleCommand::Delete(r) => {
            let change = client
                .update(&r.project, |p| edit::delete(p, &r.role, &mut note))
                .await?;
            print_note(note);
            if change == Change::Write {
                println!("Role '{}' deleted", r.role);
            }
        }
        RoleCommand::CreateToken {
            target,
            expires_in,
            id,
            token_only,
        } => {
            let seconds = expires_in_seconds(&expires_in)?;
            let token = client
                .create_token(&target.project, &target.role, seconds, &id)
                .await?;
            print!("{}", token_report(&token, token_only, &tz)?);
        }
        RoleCommand::ListTokens { target, unixtime } => {
            let p = client.get(&target.project).await?;
            let role = show::find(&p, &target.role)?;
            let tokens = show::tokens(&p, role);
            if tokens.is_empty() {
                println!("No tokens for {}.{}", target.project, target.role);
            } else {
                print!("{}", show::tokens_table(&tokens, unixtime, &tz));
            }
        }
        RoleCommand::DeleteToken { target, issued_at } => {
            let iat: i64 = issued_at.parse().with_context(|| {
                format!("strconv.ParseInt: parsing {issued_at:?}: invalid syntax")
            })?;
            match client.server() {
                Some(s) => {
                    s.delete(&format!(
                        "/api/v1/projects/{}/roles/{}/token/{iat}",
                        crate::cmd::remote::enc(&target.project),
                        crate::cmd::remote::enc(&target.role)
                    ))
                    .await?;
                }
                None => {
                    client
                        .update(&target.project, |p| {
                            edit::delete_token(p, &target.role, iat)
                        })
                        .await?;
                }
            }
        }
        RoleCommand::AddPolicy(a) | RoleCommand::RemovePolicy(a)
            if !plumb_policy::project::PROJECT_SCOPED_RESOURCES.contains(&a.resource.as_str()) =>
        {
            edit::check_resource(&a.resource)?;
        }
        RoleCommand::AddPolicy(a) => {
            let line = policy(&a);
            client
                .update(&a.target.project, |p| {
                    edit::add_policy(p, &a.target.role, &line)
                })
                .await?;
        }
        RoleCommand::RemovePolicy(a) => {
            let line = policy(&a);
            client
                .update(&a.target.project, |p| {
                    edit::remove_policy(p, &a.target.role, &line)
                })
                .await?;
        }
        RoleCommand::AddGroup(g) => {
            client
                .update(&g.target.project, |p| {
                    edit::add_group(p, &g.target.role, &g.group, &mut note)
                })
                .await?;
            print_note(note);
        }
        RoleCommand::RemoveGroup(g) => {
            client
                .update(&g.target.project, |p| {
                    edit::remove_group(p, &g.target.role, &g.group, &mut note)
                })
                .await?;
            print_note(note);
        }
    }
    Ok(Outcome::Success)
}

fn policy(a: &PolicyArgs) -> String {
    edit::policy_line(
        &a.target.project,
        &a.target.role,
        &a.resource,
        &a.action,
        &a.object,
        &a.permission,
    )
}

/// What `create-token` prints: the token's subject, id and times from its claims.
fn token_report(token: &str, token_only: bool, tz: &TimeZone) -> Result<String> {
    if token_only {
        return Ok(format!("{token}\n"));
    }
    use base64::Engine as _;
    let payload = token
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .ok()
        })
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .context("received malformed token")?;
    let int = |f: &str| {
        payload
            .get(f)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0) as i64
    };
    let str_ = |f: &str| {
        payload
            .get(f)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
    };
    let time = |t: i64| {
        if t > 0 {
            show::rfc3339(t, tz)
        } else {
            "Never".into()
        }
    };
    Ok(format!(
        "Create token succeeded for {}.\n  ID: {}\n  Issued At: {}\n  Expires At: {}\n  Token: {token}\n",
        str_("sub"),
        str_("jti"),
        time(int("iat")),
        time(int("exp")),
    ))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: RoleArgs,
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from([
            "role",
            "add-policy",
            "p",
            "ci",
            "-a",
            "sync",
            "-o",
            "*",
            "-r",
            "logs",
        ])
        .unwrap();
        let RoleCommand::AddPolicy(a) = cli.args.command else {
            panic!("add-policy")
        };
        assert_eq!(policy(&a), "p, proj:p:ci, logs, sync, p/*, allow");
        assert!(Cli::try_parse_from(["role", "token-list", "p", "ci", "-u"]).is_ok());
        assert!(Cli::try_parse_from(["role", "remove-token", "p", "ci", "12"]).is_ok());
        assert_eq!(expires_in_seconds("7d").unwrap(), 7 * 86_400);
        assert_eq!(expires_in_seconds("1h30m").unwrap(), 5400);
        assert_eq!(expires_in_seconds("").unwrap(), 0);
    }
}
