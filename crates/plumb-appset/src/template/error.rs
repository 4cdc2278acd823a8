//! Errors of rendering, shared by the template modules.

use std::fmt;

/// Bytes of rendered strings one Application may hold (an object this size could not be stored
/// anyway: etcd's limit is 1.5 MiB); bounds `{{param}}` fan-out of large parameters.
pub const MAX_RENDERED_BYTES: usize = 2 * 1024 * 1024;

/// Why a parameter set did not render into an Application.
#[derive(Debug, thiserror::Error)]
pub struct TemplateError {
    /// The ApplicationSet's name.
    pub set: String,
    /// Index of the parameter set in its generator's output, when the caller knows it.
    pub index: Option<usize>,
    /// The field of the template or the Application, e.g. `spec.source.path`, `templatePatch`.
    pub field: String,
    /// What went wrong.
    #[source]
    pub kind: TemplateErrorKind,
}

impl TemplateError {
    /// The same error naming the index of the parameter set.
    #[must_use]
    pub fn at(mut self, index: usize) -> Self {
        self.index = Some(index);
        self
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApplicationSet {:?}", self.set)?;
        if let Some(index) = self.index {
            write!(f, ", parameter set {index}")?;
        }
        write!(f, ", {}: {}", self.field, self.kind)
    }
}

/// The kinds of [`TemplateError`].
#[derive(Debug, thiserror::Error)]
pub enum TemplateErrorKind {
    /// A `{{param}}` template Argo's fasttemplate refuses (an unclosed `{{`).
    #[error("invalid template: {0}")]
    Fast(String),
    /// A Go template that does not parse or fails to execute (a missing key with
    /// `missingkey=error`, a function error, a bound of plumb-gotemplate).
    #[error("{0}")]
    Go(String),
    /// `templatePatch` is not YAML/JSON of an Application.
    #[error("invalid templatePatch: {0}")]
    Patch(String),
    /// The rendered object is not an Application.
    #[error("the rendered template is not an Application: {0}")]
    Shape(String),
    /// The rendered Application is invalid (name, destination, project).
    #[error("{0}")]
    Invalid(String),
    /// Rendered strings exceed [`MAX_RENDERED_BYTES`].
    #[error("rendered strings exceed {MAX_RENDERED_BYTES} bytes")]
    TooLarge,
}

/// A field-less failure inside a module, given its field by the caller.
pub(crate) type Failure = (String, TemplateErrorKind);
