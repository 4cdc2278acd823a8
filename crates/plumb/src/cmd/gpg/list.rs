//! `plumb gpg list`: Argo's `printKeyTable` (`KEYID TYPE IDENTITY`), or JSON, YAML.

use anyhow::Result;
use clap::Args;
use serde_json::Value;

use super::client::GpgClient;
use super::format::Format;
use crate::exit::Outcome;
use crate::output::tabwriter::Table;
use crate::output::{json, yaml};

/// `plumb gpg list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format. One of: json|yaml|wide.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Wide)]
    pub output: Format,
}

/// The table: key ID, upper-cased subtype, owner; columns padded by two spaces.
pub fn table(keys: &[Value]) -> String {
    let mut w = Table::with(0, 2);
    w.row(&["KEYID", "TYPE", "IDENTITY"]);
    for k in keys {
        let s = |f: &str| k[f].as_str().unwrap_or_default().to_string();
        w.row(&[s("keyID"), s("subType").to_uppercase(), s("owner")]);
    }
    w.render()
}

/// Runs `plumb gpg list`.
pub async fn run(client: &GpgClient, args: ListArgs) -> Result<Outcome> {
    let keys = client.list().await?;
    print!(
        "{}",
        match args.output {
            Format::Wide => table(&keys),
            Format::Json => json::render(&keys)?,
            Format::Yaml => yaml::render(&keys)?,
        }
    );
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_table_is_argos() {
        let keys = [json!({"keyID": "4AEE18F83AFDEB23", "subType": "rsa4096",
                           "owner": "GitHub <noreply@github.com>"})];
        assert_eq!(
            table(&keys),
            "KEYID             TYPE     IDENTITY\n\
             4AEE18F83AFDEB23  RSA4096  GitHub <noreply@github.com>\n"
        );
    }
}
