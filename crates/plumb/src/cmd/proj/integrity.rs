//! `plumb proj source-integrity git policies list|add|update|delete`: Argo CD 3.6's verbs for
//! an AppProject's `spec.sourceIntegrity` (`cmd/argocd/commands/project_source_integrity.go`),
//! same flags, table, prompts and messages, in core mode or through `plumb server`. The edits
//! are in [`super::integrity_edit`].

use std::io::Write;

use anyhow::Result;
use clap::{Args, Subcommand};
use plumb_model::application::SourceIntegrityGitPolicy;

use super::ProjClient;
use super::client::Backend;
use super::integrity_edit::{self as edit, AddArgs, UpdateArgs};
use crate::cmd::gpg::GpgClient;
use crate::exit::Outcome;
use crate::output::project::integrity_table;

/// `plumb proj source-integrity ...`.
#[derive(Debug, Args)]
pub struct SourceIntegrityArgs {
    #[command(subcommand)]
    command: Kind,
}

#[derive(Debug, Subcommand)]
enum Kind {
    /// Manage policies for Git repositories
    Git(GitArgs),
}

/// `plumb proj source-integrity git ...`.
#[derive(Debug, Args)]
struct GitArgs {
    #[command(subcommand)]
    command: GitCommand,
}

#[derive(Debug, Subcommand)]
enum GitCommand {
    /// Manage git source integrity policies
    Policies(PoliciesArgs),
}

#[derive(Debug, Args)]
struct PoliciesArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// List git source integrity policies (the ID names a policy in delete and update)
    List(ListArgs),
    /// Add a git source integrity policy
    Add(Box<AddArgs>),
    /// Update a git source integrity policy
    Update(Box<UpdateArgs>),
    /// Delete a git source integrity policy
    Delete(DeleteArgs),
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Project name.
    project: String,
}

#[derive(Debug, Args)]
struct DeleteArgs {
    /// Project name.
    project: String,
    /// Policy IDs (from `list`).
    #[arg(required = true)]
    policy_ids: Vec<String>,
    /// Skip explicit confirmation
    #[arg(short = 'y', long)]
    yes: bool,
}

/// Runs `plumb proj source-integrity ...`.
pub async fn run(client: &ProjClient, args: SourceIntegrityArgs) -> Result<Outcome> {
    let Kind::Git(GitArgs {
        command: GitCommand::Policies(p),
    }) = args.command;
    match p.command {
        PolicyCommand::List(a) => {
            let project = client.read_value(&a.project).await?;
            print(&edit::policies(&project, &a.project)?);
        }
        PolicyCommand::Add(a) => add(client, &a).await?,
        PolicyCommand::Update(a) => update(client, &a).await?,
        PolicyCommand::Delete(a) => delete(client, &a).await?,
    }
    Ok(Outcome::Success)
}

fn print(policies: &[SourceIntegrityGitPolicy]) {
    print!("{}", integrity_table(policies));
}

/// The key IDs of the configured keyring (`argocd-gpg-keys-cm`, or the server's GPGKeyService).
async fn keyring(client: &ProjClient) -> Result<Vec<String>> {
    let gpg = match &client.backend {
        Backend::Kube(k) => GpgClient::Kube {
            client: k.client.clone(),
            namespace: client.namespace().to_string(),
        },
        Backend::Server(s) => GpgClient::Server(s.clone()),
    };
    let keys = gpg
        .list()
        .await
        .map_err(|e| anyhow::anyhow!("failed listing GPG keys: {e:#}"))?;
    Ok(keys
        .iter()
        .filter_map(|k| k.get("keyID").and_then(|v| v.as_str()).map(str::to_string))
        .collect())
}

async fn warn(client: &ProjClient, policy: &SourceIntegrityGitPolicy) -> Result<()> {
    let needs_keyring = policy.gpg.as_ref().is_some_and(|g| !g.keys.is_empty());
    let keys = if needs_keyring {
        keyring(client).await?
    } else {
        Vec::new()
    };
    for w in edit::warnings(policy, &keys) {
        eprintln!("{w}");
    }
    Ok(())
}

async fn add(client: &ProjClient, a: &AddArgs) -> Result<()> {
    let mut project = client.read_value(&a.project).await?;
    let policy = edit::add(&mut project, a)?;
    warn(client, &policy).await?;
    client
        .update(&a.project, |p| edit::add(p, a).map(|_| edit_write()))
        .await?;
    let project = client.read_value(&a.project).await?;
    print(&edit::policies(&project, &a.project)?);
    Ok(())
}

fn edit_write() -> super::update::Change {
    super::update::Change::Write
}

async fn update(client: &ProjClient, a: &UpdateArgs) -> Result<()> {
    let mut project = client.read_value(&a.project).await?;
    let count = edit::policies(&project, &a.project)?.len();
    let index = edit::policy_index(&a.policy_id, count)?;
    let policy = edit::update(&mut project, index, a)?;
    warn(client, &policy).await?;
    print(&edit::policies(&project, &a.project)?);
    let question = format!(
        "Are you sure you want to update policy {index} from project {:?}? [y/N] ",
        a.project
    );
    if !a.yes && !confirm(&question)? {
        println!("Aborted by user.");
        return Ok(());
    }
    client
        .update(&a.project, |p| {
            edit::update(p, index, a).map(|_| edit_write())
        })
        .await?;
    Ok(())
}

async fn delete(client: &ProjClient, a: &DeleteArgs) -> Result<()> {
    let project = client.read_value(&a.project).await?;
    let count = edit::policies(&project, &a.project)?.len();
    let mut ids = Vec::new();
    for id in &a.policy_ids {
        let i = edit::policy_index(id, count)?;
        if !ids.contains(&i) {
            ids.push(i);
        }
    }
    if !a.yes {
        // Argo sorts the IDs as strings.
        let mut shown: Vec<String> = ids.iter().map(ToString::to_string).collect();
        shown.sort();
        let question = format!(
            "Are you sure you want to delete policies {} from project {:?}? [y/N] ",
            shown.join(", "),
            a.project
        );
        if !confirm(&question)? {
            println!("Aborted by user.");
            return Ok(());
        }
    }
    client.update(&a.project, |p| edit::delete(p, &ids)).await?;
    Ok(())
}

fn confirm(question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let answer = crate::cmd::app::ask_to_proceed(question, &mut stdin.lock(), &mut out);
    out.flush().ok();
    answer
}
