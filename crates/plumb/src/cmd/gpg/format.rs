//! `-o` of `gpg list` and `gpg get`.

use clap::ValueEnum;

/// Output format. One of: json|yaml|wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Argo's table (list) or labelled lines (get).
    Wide,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}
