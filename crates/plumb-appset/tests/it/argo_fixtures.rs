//! Plumb's templates against what Argo CD's real ApplicationSet controller generated for the
//! cases of conformance/appset/ (recorded by `scripts/conformance appset`, fixtures argo.json).
//!
//! What is compared so far: every ApplicationSet whose generators are all `list` (their parameters
//! are the elements, by Argo's list rules below), rendered by `template::render_application`, against
//! the Applications Argo created for it (metadata name, namespace, labels, annotations,
//! finalizers, and spec), and Argo's template errors against Plumb's (Argo's message must be part
//! of Plumb's). Sets with other generators, a strategy, or a second step (`set-2.yaml`) wait for
//! the generators and the controller (`generate`, the controller's own comparison); they are
//! listed as skipped, with why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plumb_appset::generators::ParamSet;
use plumb_appset::template::{TemplateErrorKind, render_application};
use plumb_model::applicationset::{ApplicationSet, ListGenerator};
use serde_json::{Map, Value, json};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/appset")
}

/// Argo's list generator: the element itself with Go templates; otherwise string values only,
/// `values.X` flattened.
fn list_params(list: &ListGenerator, go: bool) -> Vec<ParamSet> {
    let mut out = Vec::new();
    for element in list.elements.iter().flatten() {
        let Some(element) = element.as_object() else {
            continue;
        };
        let params = if go {
            element.clone()
        } else {
            let mut p = Map::new();
            for (k, v) in element {
                if k == "values" {
                    for (vk, vv) in v.as_object().into_iter().flatten() {
                        p.insert(format!("values.{vk}"), vv.clone());
                    }
                } else {
                    p.insert(k.clone(), v.clone());
                }
            }
            p
        };
        out.push(ParamSet {
            params,
            template: list.template.clone(),
        });
    }
    out
}

/// Why a set cannot be compared through templates alone, if it cannot.
fn skip_reason(set: &ApplicationSet, case: &Path) -> Option<&'static str> {
    if case.join("set-2.yaml").exists() {
        return Some("a second step: the controller's policies (actl)");
    }
    if set.spec.strategy.is_some() {
        return Some("a rollout strategy (aroll)");
    }
    if set.spec.generators.iter().any(|g| g.list.is_none()) {
        return Some("generators other than list (agen's generate)");
    }
    None
}

/// The parts of an Application the template decides.
fn rendered_part(app: &Value) -> Value {
    let m = &app["metadata"];
    let mut meta = Map::new();
    for key in ["name", "namespace", "labels", "annotations", "finalizers"] {
        if let Some(v) = m.get(key) {
            meta.insert(key.to_string(), v.clone());
        }
    }
    json!({"metadata": meta, "spec": app["spec"]})
}

struct Outcome {
    compared: usize,
    skipped: Vec<String>,
    differences: Vec<String>,
}

fn compare_set(
    set: &ApplicationSet,
    argo: &Value,
    exempt: &BTreeMap<String, Vec<String>>,
    out: &mut Outcome,
) {
    let name = set.name().to_string();
    let mut ours = Vec::new();
    let mut errors = Vec::new();
    for generator in &set.spec.generators {
        let Some(list) = &generator.list else {
            continue;
        };
        for (i, ps) in list_params(list, set.spec.go_template()).iter().enumerate() {
            match render_application(set, ps) {
                Ok(app) => ours.push(rendered_part(
                    &serde_json::to_value(app).unwrap_or_default(),
                )),
                Err(e) => errors.push(e.at(i)),
            }
        }
    }
    ours.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let theirs: Vec<Value> = argo["applications"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| owned_by(a, &name))
        .map(rendered_part)
        .collect();
    out.compared += 1;
    // Argo creates what rendered and validated; an Application the API server refused (a name
    // that is no DNS subdomain) Plumb refuses before writing.
    let argo_error = argo_condition(argo, &name, "ErrorOccurred");
    let pointers = exempt.get(&name).cloned().unwrap_or_default();
    let whole_set = exempt.contains_key(&name) && pointers.is_empty();
    for (o, t) in ours.iter().zip(&theirs) {
        let (o, t) = (without(o.clone(), &pointers), without(t.clone(), &pointers));
        if o != t {
            out.differences.push(format!(
                "{name}: Application differs\n  Argo:  {t}\n  Plumb: {o}"
            ));
        }
    }
    if ours.len() != theirs.len() && !whole_set {
        out.differences.push(format!(
            "{name}: Argo created {} Applications, Plumb rendered {}",
            theirs.len(),
            ours.len()
        ));
    }
    match (&argo_error, errors.first()) {
        (Some(message), Some(e)) => {
            let go = matches!(
                e.kind,
                TemplateErrorKind::Go(_) | TemplateErrorKind::Fast(_)
            );
            if go && !e.to_string().contains(message.as_str()) {
                out.differences.push(format!(
                    "{name}: errors differ\n  Argo:  {message}\n  Plumb: {e}"
                ));
            }
        }
        (None, None) => {}
        (a, p) if !whole_set => out.differences.push(format!(
            "{name}: Argo error {a:?}, Plumb error {:?}",
            p.map(ToString::to_string)
        )),
        _ => {}
    }
}

fn owned_by(app: &Value, set: &str) -> bool {
    app["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|o| o.iter().any(|r| r["name"] == set))
}

fn argo_condition(argo: &Value, set: &str, kind: &str) -> Option<String> {
    let sets = argo["applicationSets"].as_array()?;
    let s = sets.iter().find(|s| s["name"] == set)?;
    s["conditions"].as_array()?.iter().find_map(|c| {
        (c["type"] == kind && c["status"] == "True")
            .then(|| c["message"].as_str().unwrap_or_default().to_string())
    })
}

fn read_sets(path: &Path) -> Vec<ApplicationSet> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    plumb_yaml::read_documents(&text, &path.display().to_string())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.value["kind"] == "ApplicationSet")
        .filter_map(|d| serde_json::from_value(d.value).ok())
        .collect()
}

/// Documented differences of a case (`template-differences`): `SET<TAB>reason` for a set whose
/// errors or counts Plumb's templates cannot match alone, `SET<TAB>/json/pointer<TAB>reason` for
/// a field left out of the comparison on both sides.
fn exemptions(case: &Path) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(case.join("template-differences")).unwrap_or_default();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.split('\t').collect();
        assert!(
            fields.len() >= 2 && !fields[fields.len() - 1].is_empty(),
            "no reason: {line}"
        );
        let pointers = out.entry(fields[0].to_string()).or_default();
        if fields.len() == 3 {
            pointers.push(fields[1].to_string());
        }
    }
    out
}

/// `app` without the documented fields.
fn without(mut app: Value, pointers: &[String]) -> Value {
    for p in pointers {
        let Some((parent, key)) = p.rsplit_once('/') else {
            continue;
        };
        if let Some(Value::Object(m)) = app.pointer_mut(parent) {
            m.remove(key);
        }
    }
    app
}

#[test]
fn argo_fixtures() {
    let mut out = Outcome {
        compared: 0,
        skipped: Vec::new(),
        differences: Vec::new(),
    };
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    cases.sort();
    for case in cases.iter().filter(|c| c.join("argo.json").exists()) {
        let argo: Value = serde_json::from_str(
            &std::fs::read_to_string(case.join("argo.json")).unwrap_or_default(),
        )
        .unwrap_or(Value::Null);
        let exempt = exemptions(case);
        for set in read_sets(&case.join("set.yaml")) {
            match skip_reason(&set, case) {
                Some(why) => out.skipped.push(format!("{}: {why}", set.name())),
                None => compare_set(&set, &argo, &exempt, &mut out),
            }
        }
    }
    println!(
        "argo fixtures: {} sets compared, {} skipped",
        out.compared,
        out.skipped.len()
    );
    for s in &out.skipped {
        println!("  skipped {s}");
    }
    assert!(
        out.compared > 0,
        "no fixtures under {}",
        cases_dir().display()
    );
    assert!(
        out.differences.is_empty(),
        "differences from Argo:\n{}",
        out.differences.join("\n")
    );
}
