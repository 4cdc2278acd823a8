//! `plumb gpg add --from FILE`: adds the public keys of an armored file (bounded; keys already
//! configured are skipped), printing Argo's sentence.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use super::client::GpgClient;
use crate::exit::Outcome;

/// `plumb gpg add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Path to the file that contains the GPG public key to import.
    #[arg(short = 'f', long = "from", value_name = "FILE")]
    pub from: Option<PathBuf>,
}

/// Argo's report of an add.
pub fn report(created: usize, skipped: usize) -> String {
    let mut out = format!("Created {created} key(s) from input file");
    if skipped > 0 {
        out.push_str(&format!(
            ", and {skipped} key(s) were skipped because they exist already"
        ));
    }
    out.push_str(".\n");
    out
}

/// Runs `plumb gpg add`.
pub async fn run(client: &GpgClient, args: AddArgs) -> Result<Outcome> {
    let Some(path) = args.from else {
        bail!("--from is mandatory");
    };
    let limit = plumb_source::MAX_KEY_BYTES as u64;
    let size = std::fs::metadata(&path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if size > limit {
        bail!(
            "{}: {size} bytes, more than the limit of {limit} for a key file",
            path.display()
        );
    }
    let data =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let (created, skipped) = client.add(data).await?;
    print!("{}", report(created, skipped));
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_argos() {
        assert_eq!(report(1, 0), "Created 1 key(s) from input file.\n");
        assert_eq!(
            report(0, 2),
            "Created 0 key(s) from input file, and 2 key(s) were skipped because they exist already.\n"
        );
    }
}
