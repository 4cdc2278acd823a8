//! `plumb app history NAME [-o wide|id]`: the deployments recorded in `status.history`, in
//! Argo's layout (`printApplicationHistoryTable`): one block per source repository, in order of
//! first appearance, each a `SOURCE  <repoURL>` line over `ID  DATE  REVISION` rows, blocks
//! separated by a blank line. REVISION is the target revision followed by the first seven
//! characters of the commit when one was recorded; DATE is Go's `time.Time` text in the local
//! zone. `-o id` prints the ids alone.

use anyhow::Result;
use clap::{Args, ValueEnum};
use jiff::tz::TimeZone;
use plumb_model::application::RevisionHistory;

use super::client::AppClient;
use crate::exit::Outcome;
use crate::output::tabwriter::Table;
use crate::output::timefmt;

/// `-o` of `app history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    /// One table per source repository.
    Wide,
    /// Deployment ids, one a line.
    Id,
}

/// `plumb app history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Application name.
    pub name: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = HistoryFormat::Wide)]
    pub output: HistoryFormat,
}

const SHORT_SHA: usize = 7;

fn revision_text(target: Option<&str>, revision: Option<&str>) -> String {
    let target = target.unwrap_or_default();
    match revision {
        Some(r) if r.chars().count() >= SHORT_SHA => {
            format!(
                "{target} ({})",
                r.chars().take(SHORT_SHA).collect::<String>()
            )
        }
        _ => target.to_string(),
    }
}

/// Argo's history table.
pub fn table(history: &[RevisionHistory], tz: &TimeZone) -> String {
    // Repository → rows, in order of first appearance.
    let mut blocks: Vec<(String, Vec<[String; 3]>)> = Vec::new();
    let mut add = |repo: &str, row: [String; 3]| match blocks.iter_mut().find(|(r, _)| r == repo) {
        Some((_, rows)) => rows.push(row),
        None => blocks.push((repo.to_string(), vec![row])),
    };
    for entry in history {
        let date = timefmt::go_time(Some(&entry.deployed_at), tz);
        match &entry.sources {
            Some(sources) => {
                let revisions = entry.revisions.as_deref().unwrap_or_default();
                for (i, source) in sources.iter().enumerate() {
                    // Commits are shown only when there is one per source.
                    let commit = (revisions.len() == sources.len()).then(|| revisions[i].as_str());
                    let rev = revision_text(source.target_revision.as_deref(), commit);
                    add(&source.repo_url, [entry.id.to_string(), date.clone(), rev]);
                }
            }
            None => {
                let source = entry.source.as_ref();
                let rev = revision_text(
                    source.and_then(|s| s.target_revision.as_deref()),
                    entry.revision.as_deref(),
                );
                let repo = source.map(|s| s.repo_url.as_str()).unwrap_or_default();
                add(repo, [entry.id.to_string(), date, rev]);
            }
        }
    }
    let mut t = Table::new();
    for (i, (repo, rows)) in blocks.iter().enumerate() {
        t.row(&["SOURCE", repo.as_str()]);
        t.row(&["ID", "DATE", "REVISION"]);
        for row in rows {
            t.row(row);
        }
        if i + 1 < blocks.len() {
            t.line("");
        }
    }
    t.render()
}

/// The ids, one a line (`-o id`).
pub fn ids(history: &[RevisionHistory]) -> String {
    history.iter().map(|h| format!("{}\n", h.id)).collect()
}

/// Runs `plumb app history`.
pub async fn run(client: &AppClient, args: HistoryArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    let history = app
        .status
        .as_ref()
        .and_then(|s| s.history.as_deref())
        .unwrap_or_default();
    match args.output {
        HistoryFormat::Id => print!("{}", ids(history)),
        HistoryFormat::Wide => print!("{}", table(history, &TimeZone::system())),
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: HistoryArgs,
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["history", "payments-api"]).unwrap();
        assert_eq!(cli.args.output, HistoryFormat::Wide);
        let cli = Cli::try_parse_from(["history", "payments-api", "-o", "id"]).unwrap();
        assert_eq!(cli.args.output, HistoryFormat::Id);
        assert!(Cli::try_parse_from(["history", "payments-api", "-o", "json"]).is_err());
    }

    #[test]
    fn revisions_show_seven_characters_of_the_commit() {
        assert_eq!(
            revision_text(
                Some("v1.4.0"),
                Some("9f3c1ad7e2b84c6a0d5f1e3b7c9a2d4e6f8b0c1d")
            ),
            "v1.4.0 (9f3c1ad)"
        );
        assert_eq!(revision_text(Some("2.3.1"), Some("2.3.1")), "2.3.1");
        assert_eq!(revision_text(None, None), "");
        assert_eq!(table(&[], &TimeZone::UTC), "");
    }
}
