//! `matrix`: every combination of two generators' parameter sets, the second rendered with
//! each of the first's (Argo's `MatrixGenerator`).

use plumb_model::applicationset::{ApplicationSet, ApplicationSetGenerator, MatrixGenerator};
use serde_json::Value;

use super::values::{Mode, go_format, render};
use super::{ParamSet, transform};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;

/// The combined parameter sets, first generator's order outermost.
pub async fn generate(
    spec: &MatrixGenerator,
    set: &ApplicationSet,
    ctx: &Context,
    depth: usize,
) -> Result<Vec<Params>, GeneratorError> {
    let gens = spec.generators.as_deref().unwrap_or_default();
    if gens.len() < 2 {
        return Err(GeneratorError::Invalid(
            "found less than two generators, Matrix support only two".to_owned(),
        ));
    }
    if gens.len() > 2 {
        return Err(GeneratorError::Invalid(
            "found more than two generators, Matrix support only two".to_owned(),
        ));
    }
    let first = child(&gens[0], set, ctx, None, depth).await.map_err(|e| {
        GeneratorError::Invalid(format!(
            "error failed to get params for first generator in matrix generator: {e}"
        ))
    })?;
    let second_err = |e: GeneratorError| {
        GeneratorError::Invalid(format!(
            "failed to get params for second generator in the matrix generator: {e}"
        ))
    };
    // A second generator that uses no parameter gives the same sets for every first set.
    let reusable = !uses_templates(&gens[1]);
    let reused = match (reusable, first.first()) {
        (true, Some(a)) => Some(
            child(&gens[1], set, ctx, Some(a), depth)
                .await
                .map_err(second_err)?,
        ),
        _ => None,
    };
    let mode = Mode::of(set);
    let mut out = Vec::new();
    for a in &first {
        let fresh;
        let second = match &reused {
            Some(r) => r,
            None => {
                fresh = child(&gens[1], set, ctx, Some(a), depth)
                    .await
                    .map_err(second_err)?;
                &fresh
            }
        };
        if out.len() + second.len() > ctx.limits.max_params {
            return Err(GeneratorError::Limit(format!(
                "matrix generator: more than {} parameter sets",
                ctx.limits.max_params
            )));
        }
        for b in second {
            out.push(combine(a, b, mode.go_template)?);
        }
    }
    Ok(out)
}

/// One child's parameters (its own template override is ignored, as in Argo).
async fn child(
    generator: &ApplicationSetGenerator,
    set: &ApplicationSet,
    ctx: &Context,
    parent: Option<&Params>,
    depth: usize,
) -> Result<Vec<Params>, GeneratorError> {
    let sets = transform(generator, set, ctx, parent, depth)
        .await
        .map_err(|e| {
            GeneratorError::Invalid(format!(
                "child generator returned an error on parameter generation: {e}"
            ))
        })?;
    Ok(sets
        .into_iter()
        .map(|ParamSet { params, .. }| params)
        .collect())
}

fn uses_templates(generator: &ApplicationSetGenerator) -> bool {
    serde_json::to_string(generator).map_or(true, |s| s.contains("{{"))
}

/// `a` over `b`: deep merge with `a` winning (Go templates, mergo), or string maps that must
/// agree on shared keys (`{{param}}` mode, Argo's `CombineStringMaps`).
fn combine(a: &Params, b: &Params, go: bool) -> Result<Params, GeneratorError> {
    if go {
        let mut out = b.clone();
        deep_merge(&mut out, a);
        return Ok(out);
    }
    let mut out: Params = a
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(go_format(v))))
        .collect();
    for (k, v) in b {
        let v = go_format(v);
        if let Some(Value::String(current)) = out.get(k)
            && *current != v
        {
            return Err(GeneratorError::Invalid(format!(
                "failed to combine string maps with merging params for the matrix generator: \
                 found duplicate key {k} with different value, a: {current} ,b: {v}"
            )));
        }
        out.insert(k.clone(), Value::String(v));
    }
    Ok(out)
}

/// mergo's `Merge(dst, src, WithOverride)` on JSON maps: objects merge recursively, anything
/// else in `src` replaces `dst`'s.
pub fn deep_merge(dst: &mut Params, src: &Params) {
    for (k, v) in src {
        match (dst.get_mut(k), v) {
            (Some(Value::Object(d)), Value::Object(s)) => deep_merge(d, s),
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Argo's `InterpolateGenerator`: every string of the generator rendered with `params`. In Go
/// template mode a `values` entry naming a missing key is kept as written, as Argo does.
pub fn interpolate(
    generator: &ApplicationSetGenerator,
    params: &Params,
    mode: Mode<'_>,
) -> Result<ApplicationSetGenerator, GeneratorError> {
    let mut value = serde_json::to_value(generator)
        .map_err(|e| GeneratorError::Invalid(format!("error interpolating generator: {e}")))?;
    render_strings(&mut value, params, mode, false)?;
    serde_json::from_value(value).map_err(|e| {
        GeneratorError::Invalid(format!(
            "error interpolating generator with other generator's parameter: {e}"
        ))
    })
}

fn render_strings(
    value: &mut Value,
    params: &Params,
    mode: Mode<'_>,
    in_values: bool,
) -> Result<(), GeneratorError> {
    match value {
        // Argo renders `values` with `missingkey=error` and keeps an entry naming a missing
        // key as written (a later step may know it).
        Value::String(s) if in_values && mode.go_template => {
            let mut strict: Vec<String> = mode
                .go_options
                .iter()
                .filter(|o| !o.starts_with("missingkey="))
                .cloned()
                .collect();
            strict.push("missingkey=error".to_owned());
            let strict = Mode {
                go_template: true,
                go_options: &strict,
            };
            if let Ok(out) = render(s, params, strict) {
                *s = out;
            }
        }
        Value::String(s) => {
            *s = render(s, params, mode).map_err(|e| {
                GeneratorError::Invalid(format!("failed to replace parameters in generator: {e}"))
            })?;
        }
        Value::Array(items) => {
            for item in items {
                render_strings(item, params, mode, in_values)?;
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                render_strings(v, params, mode, in_values || k == "values")?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn p(v: Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn flat_combination_refuses_conflicts() {
        let a = p(json!({"path": "apps/a", "name": "x"}));
        let b = p(json!({"name": "x", "server": "https://s"}));
        let c = combine(&a, &b, false).unwrap();
        assert_eq!(c["server"], "https://s");
        let bad = p(json!({"name": "y"}));
        let err = combine(&a, &bad, false).unwrap_err().to_string();
        assert!(
            err.contains("found duplicate key name with different value, a: x ,b: y"),
            "{err}"
        );
    }

    #[test]
    fn go_combination_first_wins_deeply() {
        let a = p(json!({"path": {"basename": "a"}, "values": {"x": "1"}}));
        let b = p(json!({"path": {"basename": "b", "extra": "e"}, "name": "c"}));
        let c = combine(&a, &b, true).unwrap();
        assert_eq!(
            c,
            p(json!({"path": {"basename": "a", "extra": "e"}, "values": {"x": "1"}, "name": "c"}))
        );
    }

    #[test]
    fn second_generator_rendered_with_first_params() {
        let generator: ApplicationSetGenerator = serde_json::from_value(json!({
            "git": {"repoURL": "https://git/{{ repo }}", "revision": "{{missing}}",
                    "files": [{"path": "{{path}}/config.json"}]}
        }))
        .unwrap();
        let mode = Mode {
            go_template: false,
            go_options: &[],
        };
        let out = interpolate(
            &generator,
            &p(json!({"repo": "r.git", "path": "apps/a"})),
            mode,
        )
        .unwrap();
        let git = out.git.unwrap();
        assert_eq!(git.repo_url.as_deref(), Some("https://git/r.git"));
        assert_eq!(git.revision.as_deref(), Some("{{missing}}"));
        assert_eq!(
            git.files.unwrap()[0].path.as_deref(),
            Some("apps/a/config.json")
        );
    }
}
