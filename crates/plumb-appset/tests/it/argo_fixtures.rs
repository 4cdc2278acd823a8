//! Plumb's generators and templates against what Argo CD's real ApplicationSet controller
//! generated for the cases of conformance/appset/ (recorded by `scripts/conformance appset`,
//! fixtures argo.json).
//!
//! Each case's cluster Secrets (`before.yaml`) go into a namespace of the shared control plane, its
//! repository (`repo/`) into a local Git repository, and every ApplicationSet goes through
//! `plumb_appset::generate`; the Applications are compared with Argo's (metadata name, namespace,
//! labels, annotations, finalizers, and spec), and Argo's errors with Plumb's (for template errors
//! Argo's message must be part of Plumb's). Sets with a strategy or a second step
//! (`set-2.yaml`) are the controller's to compare (ownership, policies, RollingSync:
//! argo_controller_fixtures.rs); they are listed as skipped, with why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_appset::{GenerateError, Limits, generate};
use plumb_model::applicationset::ApplicationSet;
use plumb_testenv::TestEnv;
use serde_json::{Map, Value, json};

use crate::agen_support::{apply, context};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/appset")
}

/// Why a set cannot be compared through templates alone, if it cannot.
fn skip_reason(set: &ApplicationSet, case: &Path) -> Option<&'static str> {
    if case.join("set-2.yaml").exists() {
        return Some("a second step: compared through the controller (argo_controller_fixtures)");
    }
    if set.spec.strategy.is_some() {
        return Some(
            "a rollout strategy: compared through the controller (argo_controller_fixtures)",
        );
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

/// `set`'s generated Applications (the parts the template decides, the repository URL written
/// `@REPO@` as in the fixtures) and its errors.
async fn plumb_side(
    set: &ApplicationSet,
    ctx: &plumb_appset::Context,
    repo: &str,
) -> (Vec<Value>, Vec<GenerateError>) {
    let generated = generate(set, ctx).await;
    let mut ours: Vec<Value> = generated
        .applications
        .iter()
        .map(|app| {
            let text = serde_json::to_string(app)
                .unwrap_or_default()
                .replace(repo, "@REPO@");
            rendered_part(&serde_json::from_str(&text).unwrap_or_default())
        })
        .collect();
    ours.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    (ours, generated.errors)
}

fn compare_set(
    set: &ApplicationSet,
    (ours, errors): (Vec<Value>, Vec<GenerateError>),
    argo: &Value,
    exempt: &BTreeMap<String, Vec<String>>,
    out: &mut Outcome,
) {
    let name = set.name().to_string();
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
            let template = matches!(e, GenerateError::Template { .. });
            if template
                && message.contains("go template")
                && !e.to_string().contains(message.as_str())
            {
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

fn read_sets(text: &str) -> Vec<ApplicationSet> {
    plumb_yaml::read_documents(text, "set.yaml")
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.value["kind"] == "ApplicationSet")
        .filter_map(|d| serde_json::from_value(d.value).ok())
        .collect()
}

/// The case's repository as `scripts/conformance appset` makes it (one commit of `repo/` on
/// main); its file:// URL.
pub(crate) fn make_repo(case: &Path, dir: &Path) -> String {
    let url = format!("file://{}", dir.display());
    if case.join("repo").is_dir() {
        copy_dir(&case.join("repo"), dir);
    }
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .arg("-C")
            .arg(dir)
            .args(args)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.email=c@plumb",
        "-c",
        "user.name=conformance",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "init",
    ]);
    url
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
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

#[tokio::test]
async fn argo_fixtures() {
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
        compare_case(case, &mut out).await;
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

/// One case: its cluster Secrets in a fresh namespace (the generators' control namespace), its
/// repository, each set generated and compared.
async fn compare_case(case: &Path, out: &mut Outcome) {
    let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap_or_default();
    let argo: Value = serde_json::from_str(&read("argo.json")).unwrap_or(Value::Null);
    let exempt = exemptions(case);
    let ns = TestEnv::shared().namespace("atmpl-fx");
    let ns = ns.name();
    let before = read("before.yaml");
    if !before.is_empty() {
        apply(&before.replace("namespace: argocd", &format!("namespace: {ns}")));
    }
    let repo_dir = tempfile::tempdir().expect("a repository directory");
    let repo = make_repo(case, repo_dir.path());
    let cache = tempfile::tempdir().expect("a cache directory");
    let ctx = context(ns, &cache, Limits::default()).await;
    for set in read_sets(&read("set.yaml").replace("@REPO@", &repo)) {
        match skip_reason(&set, case) {
            Some(why) => out.skipped.push(format!("{}: {why}", set.name())),
            None => {
                let plumb = plumb_side(&set, &ctx, &repo).await;
                compare_set(&set, plumb, &argo, &exempt, out);
            }
        }
    }
}
