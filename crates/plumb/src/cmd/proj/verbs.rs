//! The one-entry verbs (`add-*`, `remove-*`, `allow-*`, `deny-*`), each a change of the project
//! run through [`ProjClient::update`]; notes Argo prints to standard output are printed there,
//! the resource-list messages go to standard error as Argo's cobra `Println` sends them.

use anyhow::Result;

use super::client::ProjClient;
use super::command::ProjCommand;
use super::update::Change;
use super::{destinations, resources, sources};
use crate::exit::Outcome;

/// Runs one of the verbs that add or remove a single entry.
// length: one dispatch arm per Argo verb, each a one-line change; splitting hides the table.
pub(super) async fn run(client: &ProjClient, command: ProjCommand) -> Result<Outcome> {
    let mut note = None;
    let mut stderr_note = None;
    use ProjCommand as C;
    match command {
        C::AddSignatureKey(a) => {
            eprintln!(
                "Command \"add-signature-key\" is deprecated, Managing project signature keys through CLI is deprecated, migrate to Source Integrity defined in AppProject manifest"
            );
            update(client, &a.project, |p| {
                sources::add_signature_key(p, &a.value)
            })
            .await?
        }
        C::RemoveSignatureKey(a) => {
            eprintln!(
                "Command \"remove-signature-key\" is deprecated, Managing project signature keys through CLI is deprecated, migrate to Source Integrity defined in AppProject manifest"
            );
            update(client, &a.project, |p| {
                sources::remove_signature_key(p, &a.value)
            })
            .await?
        }
        C::AddDestination(a) => {
            update(client, &a.project, |p| destinations::add_destination(p, &a)).await?
        }
        C::RemoveDestination(a) => {
            update(client, &a.project, |p| {
                destinations::remove_destination(p, &a)
            })
            .await?
        }
        C::AddSource(a) => {
            update(client, &a.project, |p| {
                sources::add_source(p, &a.value, &mut note)
            })
            .await?
        }
        C::RemoveSource(a) => {
            update(client, &a.project, |p| {
                sources::remove_source(p, &a.value, &mut note)
            })
            .await?
        }
        C::AddSourceNamespace(a) => {
            update(client, &a.project, |p| {
                sources::add_source_namespace(p, &a.value, &mut note)
            })
            .await?
        }
        C::RemoveSourceNamespace(a) => {
            update(client, &a.project, |p| {
                sources::remove_source_namespace(p, &a.value, &mut note)
            })
            .await?
        }
        C::AllowClusterResource(a) => {
            update(client, &a.project, |p| {
                resources::cluster(p, &a, true, &mut stderr_note)
            })
            .await?
        }
        C::DenyClusterResource(a) => {
            update(client, &a.project, |p| {
                resources::cluster(p, &a, false, &mut stderr_note)
            })
            .await?
        }
        C::AllowNamespaceResource(a) => {
            update(client, &a.project, |p| {
                resources::namespaced(p, &a, true, &mut stderr_note)
            })
            .await?
        }
        C::DenyNamespaceResource(a) => {
            update(client, &a.project, |p| {
                resources::namespaced(p, &a, false, &mut stderr_note)
            })
            .await?
        }
        C::AddOrphanedIgnore(a) => {
            update(client, &a.project, |p| {
                resources::add_orphaned_ignore(p, &a)
            })
            .await?
        }
        C::RemoveOrphanedIgnore(a) => {
            update(client, &a.project, |p| {
                resources::remove_orphaned_ignore(p, &a)
            })
            .await?
        }
        C::AddDestinationServiceAccount(a) => {
            update(client, &a.project, |p| {
                destinations::add_service_account(p, &a)
            })
            .await?
        }
        C::RemoveDestinationServiceAccount(a) => {
            update(client, &a.project, |p| {
                destinations::remove_service_account(p, &a)
            })
            .await?
        }
        C::List(_)
        | C::Get(_)
        | C::Create(_)
        | C::Delete(_)
        | C::Set(_)
        | C::Edit(_)
        | C::Role(_)
        | C::Windows(_)
        | C::SourceIntegrity(_) => return Ok(Outcome::Success),
    };
    if let Some(n) = note {
        println!("{n}");
    }
    if let Some(n) = stderr_note {
        eprintln!("{n}");
    }
    Ok(Outcome::Success)
}

async fn update(
    client: &ProjClient,
    project: &str,
    change: impl FnMut(&mut serde_json::Value) -> Result<Change>,
) -> Result<()> {
    client.update(project, change).await?;
    Ok(())
}
