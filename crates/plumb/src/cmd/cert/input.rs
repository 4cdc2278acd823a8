//! What `add-ssh` and `add-tls` read: a file or stdin, bounded.

use anyhow::Result;

/// Reads `from`, or stdin, at most 1 MiB.
pub(super) fn read_input(from: Option<&std::path::Path>) -> Result<String> {
    use anyhow::{Context as _, bail};
    use std::io::Read as _;
    const MAX: u64 = 1024 * 1024;
    let mut text = String::new();
    match from {
        Some(p) => std::fs::File::open(p)
            .with_context(|| format!("--from: reading {}", p.display()))?
            .take(MAX + 1)
            .read_to_string(&mut text)
            .with_context(|| format!("--from: reading {} as text", p.display()))?,
        None => std::io::stdin()
            .take(MAX + 1)
            .read_to_string(&mut text)
            .context("reading stdin")?,
    };
    if text.len() as u64 > MAX {
        match from {
            Some(p) => bail!("--from: {} is larger than {MAX} bytes", p.display()),
            None => bail!("stdin: the input is larger than {MAX} bytes"),
        }
    }
    Ok(text)
}
