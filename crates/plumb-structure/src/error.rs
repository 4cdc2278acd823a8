use std::path::PathBuf;

/// Why a workspace could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A directory or source file could not be read.
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A source file is not valid Rust.
    #[error("cannot parse {file}:{line}")]
    Parse {
        file: String,
        line: usize,
        #[source]
        source: syn::Error,
    },
    /// A `mod x;` declaration whose file is in neither place Rust looks.
    #[error("{file}: module `{module}` has no file ({candidates})")]
    MissingModule {
        file: String,
        module: String,
        candidates: String,
    },
    /// The root holds no `crates/*/src` directory.
    #[error("no crates/*/src under {0}")]
    NoCrates(PathBuf),
}
