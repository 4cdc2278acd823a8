//! A whole ApplicationSet to the Applications it asks for (Argo's `GenerateApplications` and
//! the duplicate-name check of `validateGeneratedApplications`): what `plumb appset generate`
//! prints and what the controller reconciles towards.

use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;

use crate::context::Context;
use crate::error::GeneratorError;
use crate::generators::{ParamSet, generate_params};

/// The desired Applications of one ApplicationSet and what went wrong producing them.
#[derive(Debug, Default)]
pub struct Generated {
    /// In generator order, then parameter order; without the repeats of a duplicate name.
    pub applications: Vec<Application>,
    /// Generator, template and duplicate-name errors. When any is present the controller
    /// deletes nothing (a generator error yields no Applications from that generator, so the
    /// list above is incomplete).
    pub errors: Vec<GenerateError>,
}

impl Generated {
    /// True when some generator failed (its Applications are missing from the list).
    pub fn generator_failed(&self) -> bool {
        self.errors
            .iter()
            .any(|e| matches!(e, GenerateError::Generator { .. }))
    }
}

/// One problem of [`generate`], its message as Argo's condition says it where Argo has one.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// `spec.generators[index]` failed.
    #[error("spec.generators[{index}]: {error}")]
    Generator {
        /// Index in `spec.generators`.
        index: usize,
        /// Why.
        #[source]
        error: GeneratorError,
    },
    /// A parameter set did not render into a valid Application.
    #[error("spec.generators[{index}], parameter set {param_set}: {message}")]
    Template {
        /// Index in `spec.generators`.
        index: usize,
        /// Index of the parameter set in that generator's output.
        param_set: usize,
        /// The template step's error.
        message: String,
    },
    /// Two parameter sets rendered Applications of the same name.
    #[error("ApplicationSet {set} contains applications with duplicate name: {name}")]
    DuplicateName {
        /// The ApplicationSet.
        set: String,
        /// The repeated name.
        name: String,
    },
}

/// Every generator of `set` run in order, every parameter set rendered with the template.
pub async fn generate(set: &ApplicationSet, ctx: &Context) -> Generated {
    generate_with(set, ctx, |set, ps| {
        crate::template::render_application(set, ps).map_err(|e| e.to_string())
    })
    .await
}

/// [`generate`] with the template step given (tests and benchmarks render without it).
pub async fn generate_with<F>(set: &ApplicationSet, ctx: &Context, render: F) -> Generated
where
    F: Fn(&ApplicationSet, &ParamSet) -> Result<Application, String>,
{
    let mut out = Generated::default();
    for (index, generator) in set.spec.generators.iter().enumerate() {
        let sets = match generate_params(generator, set, ctx).await {
            Ok(sets) => sets,
            Err(error) => {
                tracing::warn!(appset = set.name(), index, %error, "generator failed");
                out.errors.push(GenerateError::Generator { index, error });
                continue;
            }
        };
        for (param_set, ps) in sets.iter().enumerate() {
            match render(set, ps) {
                Ok(app) => out.applications.push(app),
                Err(message) => out.errors.push(GenerateError::Template {
                    index,
                    param_set,
                    message,
                }),
            }
        }
    }
    drop_duplicates(set, &mut out);
    out
}

/// Keeps the first Application of each name and reports the others.
fn drop_duplicates(set: &ApplicationSet, out: &mut Generated) {
    let mut seen = std::collections::HashSet::new();
    let mut errors = Vec::new();
    out.applications.retain(|app| {
        let name = app.metadata.name.clone().unwrap_or_default();
        if seen.insert(name.clone()) {
            return true;
        }
        errors.push(GenerateError::DuplicateName {
            set: set.name().to_owned(),
            name,
        });
        false
    });
    out.errors.extend(errors);
}
