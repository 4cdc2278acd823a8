//! `plumb app delete NAME`: with cascade (the default) the Application gets Argo's resources
//! finalizer before it is deleted, so the controller deletes its resources first; with
//! `--cascade=false` the finalizer is removed and the resources stay.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Result, bail};
use clap::{ArgAction, Args, ValueEnum};

use super::client::AppClient;
use crate::exit::Outcome;

/// `--propagation-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Propagation {
    /// Resources are deleted before the Application goes.
    Foreground,
    /// The Application goes at once; resources are deleted afterwards.
    Background,
}

/// `plumb app delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Application names.
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Delete the Application's resources too (`--cascade=false` keeps them).
    #[arg(long, action = ArgAction::Set, default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    pub cascade: bool,
    /// How cascading deletion proceeds.
    #[arg(short = 'p', long, value_enum, default_value_t = Propagation::Foreground)]
    pub propagation_policy: Propagation,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
}

/// The finalizers after choosing cascade or not (the controller crate's `delete_finalizers`,
/// the same function `plumb server` uses).
pub fn finalizers(current: &[String], cascade: bool, p: Propagation) -> Vec<String> {
    plumb_app::request::delete_finalizers(current, cascade, p == Propagation::Background)
}

fn confirm(name: &str, cascade: bool) -> Result<bool> {
    let question = if cascade {
        format!("Are you sure you want to delete '{name}' and all its resources? [y/n] ")
    } else {
        format!("Are you sure you want to delete '{name}'? [y/n] ")
    };
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        bail!("not deleting '{name}' without confirmation: pass --yes (stdin is not a terminal)");
    }
    loop {
        eprint!("{question}");
        std::io::stderr().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            return Ok(false);
        }
        match line.trim() {
            "y" | "Y" => return Ok(true),
            "n" | "N" => return Ok(false),
            _ => {}
        }
    }
}

/// Runs `plumb app delete`.
pub async fn run(client: &AppClient, args: DeleteArgs) -> Result<Outcome> {
    for name in &args.names {
        let app = client.get(name).await?;
        if !args.yes && !confirm(name, args.cascade)? {
            continue;
        }
        // Through plumb server, the server sets the finalizers from cascade and
        // propagationPolicy as the core backend does.
        client
            .delete_app(
                name,
                &app,
                args.cascade,
                args.propagation_policy == Propagation::Background,
            )
            .await?;
        println!("application '{name}' deleted");
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use plumb_model::application::RESOURCES_FINALIZER;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: DeleteArgs,
    }

    #[test]
    fn flags_parse() {
        let a = Cli::try_parse_from(["delete", "x"]).unwrap().args;
        assert!(a.cascade && !a.yes);
        assert_eq!(a.propagation_policy, Propagation::Foreground);
        let a = Cli::try_parse_from([
            "delete",
            "x",
            "y",
            "--cascade=false",
            "-y",
            "-p",
            "background",
        ])
        .unwrap()
        .args;
        assert_eq!(a.names, ["x", "y"]);
        assert!(!a.cascade && a.yes);
        assert!(
            Cli::try_parse_from(["delete", "x", "--cascade"])
                .unwrap()
                .args
                .cascade
        );
        assert!(Cli::try_parse_from(["delete"]).is_err());
        assert!(Cli::try_parse_from(["delete", "x", "--cascade=maybe"]).is_err());
    }

    #[test]
    fn finalizer_choice() {
        let other = "example.com/keep".to_string();
        assert_eq!(
            finalizers(std::slice::from_ref(&other), true, Propagation::Foreground),
            [other.clone(), RESOURCES_FINALIZER.to_string()]
        );
        assert_eq!(
            finalizers(&[], true, Propagation::Background),
            [format!("{RESOURCES_FINALIZER}/background")]
        );
        let bg = format!("{RESOURCES_FINALIZER}/background");
        assert_eq!(
            finalizers(std::slice::from_ref(&bg), true, Propagation::Foreground),
            vec![bg.clone()]
        );
        assert_eq!(
            finalizers(&[bg, other.clone()], false, Propagation::Foreground),
            [other]
        );
    }
}
