//! One parameter set and the ApplicationSet's template rendered into an Application, as Argo
//! CD's `applicationset/controllers/template` and `applicationset/utils` do it:
//!
//! 1. the generator's template override is merged over `spec.template`, the override winning
//!    field by field wherever it is not empty (Argo's `mergo.Merge`, [`merge`]);
//! 2. every string of the template, map keys included, is rendered with the parameters: by
//!    `{{param}}` substitution ([`fast`]) or, with `goTemplate: true`, as a Go template with the
//!    sprig functions and `goTemplateOptions` ([`gotmpl`]); an empty parameter set renders
//!    nothing, as in Argo;
//! 3. the `resources-finalizer.argocd.argoproj.io` finalizer is added when the template has none
//!    and `syncPolicy.preserveResourcesOnDeletion` is not set;
//! 4. `templatePatch`, rendered the same way, is read as YAML or JSON and applied as a strategic
//!    merge patch (lists replaced, maps merged, `null` deletes); it cannot change `spec.project`;
//! 5. the namespace is the ApplicationSet's (Argo's apps-in-any-namespace boundary), and the
//!    result must read as an Application with a DNS-subdomain name, a project and a destination;
//! 6. the spec is normalised as Argo's controller does before writing ([`normalize`]).
//!
//! Errors name the ApplicationSet, the field and (once [`TemplateError::at`] adds it) the index of
//! the parameter set.

mod fast;
mod gotmpl;
mod merge;
mod normalize;
mod patch;
mod validate;
mod walk;

use std::fmt;

use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;
use serde_json::{Value, json};

use crate::generators::ParamSet;

/// The finalizer that makes deleting an Application delete its resources.
pub const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

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

/// Renders `param_set` with `set`'s template into the Application Argo CD would generate.
pub fn render_application(
    set: &ApplicationSet,
    param_set: &ParamSet,
) -> Result<Application, TemplateError> {
    let error = |(field, kind): Failure| TemplateError {
        set: set.name().to_string(),
        index: None,
        field,
        kind,
    };
    let renderer = walk::Renderer::new(&set.spec, &param_set.params).map_err(error)?;
    let template = merge::generator_template(param_set.template.as_ref(), &set.spec.template);
    let mut app = json!({"metadata": template.metadata, "spec": template.spec});
    if !param_set.params.is_empty() {
        // As Argo's RenderTemplateParams: no parameters, no rendering and no finalizer.
        app = renderer.render_tree(&app).map_err(error)?;
        add_resources_finalizer(&mut app, set);
    }
    if let Some(text) = &set.spec.template_patch {
        app = patch::apply(app, text, &renderer).map_err(error)?;
    }
    app["apiVersion"] = json!("argoproj.io/v1alpha1");
    app["kind"] = json!("Application");
    if !app["metadata"].is_object() {
        app["metadata"] = json!({});
    }
    app["metadata"]["namespace"] = json!(set.namespace());
    let app = validate::application(app).map_err(error)?;
    normalize_spec(app).map_err(error)
}

/// Argo's controller validates, then normalises the spec before writing ([`normalize`]).
fn normalize_spec(app: Application) -> Result<Application, Failure> {
    let shape =
        |e: serde_json::Error| ("spec".to_string(), TemplateErrorKind::Shape(e.to_string()));
    let mut spec = serde_json::to_value(&app.spec).map_err(shape)?;
    normalize::spec(&mut spec);
    Ok(Application {
        spec: serde_json::from_value(spec).map_err(shape)?,
        ..app
    })
}

fn add_resources_finalizer(app: &mut Value, set: &ApplicationSet) {
    let preserve = set
        .spec
        .sync_policy
        .as_ref()
        .and_then(|p| p.preserve_resources_on_deletion)
        .unwrap_or(false);
    let has_finalizers = app["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if !preserve && !has_finalizers {
        app["metadata"]["finalizers"] = json!([RESOURCES_FINALIZER]);
    }
}

#[cfg(test)]
mod tests;
