//! Errors, options and limits of parsing and executing templates.

/// Largest string a function may build before the output bound is even checked (a `repeat` or
/// `printf` width that would allocate gigabytes fails here first).
pub(crate) const MAX_STRING: usize = 64 << 20;

/// Stack that must remain before the parser or executor nests once more: deep templates fail
/// with an error on any thread (a 2 MiB tokio worker included) instead of overflowing.
pub(crate) const STACK_RESERVE: usize = 256 << 10;

pub(crate) fn stack_low() -> bool {
    stacker::remaining_stack().is_some_and(|r| r < STACK_RESERVE)
}

/// Errors of parsing and executing templates; messages follow Go's text/template.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The template text does not parse (`template: NAME:LINE: ...`).
    #[error("{message}")]
    Parse {
        /// Go-style message.
        message: String,
    },
    /// Execution failed (`template: NAME:LINE:COL: executing "NAME" at <...>: ...`).
    #[error("{message}")]
    Exec {
        /// Go-style message.
        message: String,
    },
    /// A bound of [`Limits`] was reached.
    #[error("{message}")]
    Limit {
        /// What was exceeded.
        message: String,
    },
    /// A `goTemplateOptions` entry Go's `Template.Option` does not know.
    #[error(
        "unrecognized goTemplateOptions entry {0:?} (known: missingkey=default|invalid|zero|error)"
    )]
    Option(String),
}

/// What a missing map key evaluates to (Go's `missingkey=` option).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum MissingKey {
    /// `missingkey=default` / `invalid`: no value, printed as `<no value>`.
    #[default]
    Default,
    /// `missingkey=zero`: the zero value (nil for Argo's `map[string]any`, also `<no value>`).
    Zero,
    /// `missingkey=error`: execution stops.
    Error,
}

/// Bounds on one execution, so hostile templates fail instead of hanging or exhausting memory.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Nodes, commands and loop iterations executed.
    pub max_steps: u64,
    /// Bytes written to the output (and the largest string a function may return).
    pub max_output_bytes: usize,
    /// Nesting of `{{template}}` calls (Go's limit is 100,000; a stack-friendlier one here).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_steps: 5_000_000,
            max_output_bytes: 4 << 20,
            max_depth: 1_000,
        }
    }
}

/// Execution options.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Go's `missingkey` option.
    pub missing_key: MissingKey,
    /// Resource bounds.
    pub limits: Limits,
}

impl Options {
    /// From an ApplicationSet's `goTemplateOptions` (applied in order, as Go's `Option` calls).
    pub fn from_go_options(opts: &[String]) -> Result<Options, Error> {
        let mut o = Options::default();
        for opt in opts {
            o.missing_key = match opt.as_str() {
                "missingkey=default" | "missingkey=invalid" => MissingKey::Default,
                "missingkey=zero" => MissingKey::Zero,
                "missingkey=error" => MissingKey::Error,
                other => return Err(Error::Option(other.to_string())),
            };
        }
        Ok(o)
    }
}
