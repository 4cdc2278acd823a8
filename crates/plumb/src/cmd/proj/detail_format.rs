//! The `-o` formats of the `proj` verbs that show one project in detail.

use clap::ValueEnum;

/// `-o` of `proj get` and `proj windows list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DetailFormat {
    /// Argo's text layout.
    Wide,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}
