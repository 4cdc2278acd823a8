//! The `-o` of the verbs that print an Application.

use clap::ValueEnum;

/// `-o` of `app get`, `app sync` and `app wait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Argo's text layout (header and resource table).
    Wide,
    /// The Application object as JSON.
    Json,
    /// The Application object as YAML.
    Yaml,
    /// The header, then resources with the objects they own.
    Tree,
}
