//! `plumb-structure [ROOT]`: prints the structure report of a workspace and exits 1 when it has
//! an import circle or a function over the limit without a `// length:` reason.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

#[derive(Parser)]
#[command(
    name = "plumb-structure",
    about = "Check module import circles and function lengths (issue #25)"
)]
struct Args {
    /// Workspace root (default: the workspace this binary was built from).
    root: Option<PathBuf>,
    /// Longest function allowed without a `// length: <reason>` comment.
    #[arg(long, default_value_t = 80)]
    max_lines: usize,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("plumb-structure: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Prints the report; `Ok(false)` when the tree breaks a rule.
fn run(args: Args) -> anyhow::Result<bool> {
    let root = args
        .root
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let analysis = plumb_structure::analyze_workspace(&root)
        .with_context(|| format!("checking {}", root.display()))?;
    print!("{}", plumb_structure::render(&analysis, args.max_lines));
    Ok(!analysis.fails(args.max_lines))
}
