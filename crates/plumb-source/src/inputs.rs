//! What one source's render reads from its tree, so the manifest cache can be keyed by content:
//! a commit that changes none of those paths has the same key as the commit before it, and the
//! Application is not rendered again (its status still moves to the new commit).
//!
//! The paths come from Argo CD's `argocd.argoproj.io/manifest-generate-paths` annotation when the
//! Application has one (trusted as written, as Argo trusts it), else from Plumb's own reading of
//! the source, which only narrows the key when it is sure:
//! - a directory of YAML/JSON with no link and no Jsonnet: the directory;
//! - a Helm chart with no link and no `file://` dependency: the chart and its value and file
//!   parameter paths (`$ref/…` files are keyed by the ref source's commit);
//! - a kustomization: every kustomization directory it reaches and every file it names, when no
//!   link, no remote base and no other path that climbs out appears;
//! - anything else (Jsonnet imports, links, plugins, remote URLs): the whole tree, or the commit
//!   itself when the output may depend on more than the files (a plugin sees
//!   `ARGOCD_APP_REVISION`; a remote base or value URL can change without a commit).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use plumb_model::application::ApplicationSource;
use serde_json::Value;

use crate::beneath::{Kind, RepoDir};
use crate::detect::{KUSTOMIZATION_FILES, SourceType};
use crate::error::Result;
use crate::git::normalize_within;
use crate::limits::Limits;
use crate::spec::s as text;

/// What the render of one source depends on besides its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inputs {
    /// These paths of the tree (files or directories, relative to its root; `""` is the root).
    Paths(BTreeSet<PathBuf>),
    /// Anything in the tree.
    Tree,
    /// The commit itself, not only its files.
    Commit,
}

/// The paths the annotation `manifest-generate-paths` names for a source at `app`: `;`-separated,
/// absolute from the repository root when they start with `/`, else relative to `app` (`.` is
/// `app` itself). A glob stands for its directory before the first wildcard. `None` when the
/// annotation names nothing (Argo then refreshes on every change); the root when an entry climbs
/// out of the repository.
pub(crate) fn annotated_paths(annotation: &str, app: &Path) -> Option<BTreeSet<PathBuf>> {
    let mut out = BTreeSet::new();
    for item in annotation
        .split(';')
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        let joined = match item.strip_prefix('/') {
            Some(abs) => PathBuf::from(abs),
            None => app.join(item),
        };
        let literal: PathBuf = joined
            .components()
            .take_while(|c| {
                !c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            })
            .collect();
        out.insert(normalize_within(&literal).unwrap_or_default());
    }
    (!out.is_empty()).then_some(out)
}

/// What rendering `source` (detected as `kind`, at `app` in `repo`) reads.
pub(crate) fn inputs(
    kind: SourceType,
    source: &ApplicationSource,
    repo: &RepoDir,
    app: &Path,
    generate_paths: Option<&str>,
    limits: &Limits,
) -> Result<Inputs> {
    if let Some(paths) = generate_paths.and_then(|a| annotated_paths(a, app)) {
        return Ok(Inputs::Paths(paths));
    }
    match kind {
        SourceType::Directory => directory(repo, app, limits),
        SourceType::Helm => helm(source, repo, app, limits),
        SourceType::Kustomize => kustomize(repo, app, limits),
        _ => Ok(Inputs::Commit),
    }
}

/// A directory: its own subtree, unless a link (it may point anywhere in the tree) or Jsonnet
/// (imports and libs anywhere) is in it.
fn directory(repo: &RepoDir, app: &Path, limits: &Limits) -> Result<Inputs> {
    let mut clean = true;
    walk(repo, app, limits, &mut |name, kind| {
        let jsonnet = name.ends_with(".jsonnet") || name.ends_with(".libsonnet");
        if kind == Kind::Link || jsonnet {
            clean = false;
        }
    })?;
    Ok(if clean {
        Inputs::Paths(BTreeSet::from([app.to_path_buf()]))
    } else {
        Inputs::Tree
    })
}

/// A chart in Git: the chart directory, its value files and file parameters.
fn helm(source: &ApplicationSource, repo: &RepoDir, app: &Path, limits: &Limits) -> Result<Inputs> {
    let mut links = false;
    walk(repo, app, limits, &mut |_, kind| {
        links |= kind == Kind::Link
    })?;
    if links {
        return Ok(Inputs::Tree);
    }
    for file in ["Chart.yaml", "requirements.yaml"] {
        let path = app.join(file);
        if repo.is_file(&path)
            && repo
                .read_to_string(&path, limits.max_file_bytes)?
                .contains("file://")
        {
            // A dependency elsewhere in the repository.
            return Ok(Inputs::Tree);
        }
    }
    let mut paths = BTreeSet::from([app.to_path_buf()]);
    let helm = source.helm.clone().unwrap_or_default();
    let files = helm.value_files.unwrap_or_default().into_iter().chain(
        helm.file_parameters
            .unwrap_or_default()
            .into_iter()
            .map(|p| text(&p.path).to_owned()),
    );
    for file in files {
        if file.starts_with('$') {
            continue; // Another source's tree: its commit is in the key.
        }
        if file.contains("://") {
            return Ok(Inputs::Commit); // A URL's content can change without a commit.
        }
        let rel = match file.strip_prefix('/') {
            Some(abs) => PathBuf::from(abs),
            None => app.join(&file),
        };
        match normalize_within(&rel) {
            Some(p) => paths.insert(p),
            None => return Ok(Inputs::Tree), // refused by the render anyway
        };
    }
    Ok(Inputs::Paths(minimal(paths)))
}

/// A kustomization: the kustomization directories it reaches and the files it names.
fn kustomize(repo: &RepoDir, app: &Path, limits: &Limits) -> Result<Inputs> {
    let mut paths = BTreeSet::new();
    let mut pending = vec![app.to_path_buf()];
    let mut seen = BTreeSet::new();
    while let Some(dir) = pending.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let mut links = false;
        walk(repo, &dir, limits, &mut |_, kind| {
            links |= kind == Kind::Link
        })?;
        if links {
            return Ok(Inputs::Tree);
        }
        paths.insert(dir.clone());
        let Some(file) = KUSTOMIZATION_FILES
            .iter()
            .map(|f| dir.join(f))
            .find(|p| repo.is_file(p))
        else {
            continue;
        };
        let display = file.display().to_string();
        let text = repo.read_to_string(&file, limits.max_file_bytes)?;
        let doc = crate::render::kustomize_paths::first_document(&text, &display)?;
        let named = crate::render::kustomize_paths::references(&doc);
        let named_values: BTreeSet<&str> = named.iter().map(|(_, p)| p.as_str()).collect();
        // A path in a field Plumb does not know of: unsure, so the whole tree.
        if strings(&doc)
            .iter()
            .any(|s| !named_values.contains(s.as_str()) && climbs(s))
        {
            return Ok(Inputs::Tree);
        }
        for (_, entry) in &named {
            match crate::render::kustomize_remote::target(entry) {
                crate::render::kustomize_remote::Target::Local => {}
                _ => return Ok(Inputs::Commit), // a remote base moves on its own
            }
            if Path::new(entry).is_absolute() {
                return Ok(Inputs::Tree);
            }
            let Some(rel) = normalize_within(&dir.join(entry)) else {
                return Ok(Inputs::Tree);
            };
            if repo.is_dir(&rel) {
                pending.push(rel);
            } else {
                paths.insert(rel);
            }
        }
    }
    Ok(Inputs::Paths(minimal(paths)))
}

/// The paths without those inside another of them (already covered by its object id).
fn minimal(paths: BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
    paths
        .iter()
        .filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect()
}

/// Whether a string in a kustomization reads like a path leaving its directory.
fn climbs(s: &str) -> bool {
    !s.contains('\n')
        && (s.starts_with('/')
            || Path::new(s)
                .components()
                .any(|c| matches!(c, Component::ParentDir)))
}

/// Every string value in a document.
fn strings(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    out
}

/// Visits every entry under `dir` (names and kinds), bounded by the tree limits.
fn walk(
    repo: &RepoDir,
    dir: &Path,
    limits: &Limits,
    visit: &mut dyn FnMut(&str, Kind),
) -> Result<()> {
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0u64;
    while let Some(d) = pending.pop() {
        for (name, kind) in repo.entries(&d)? {
            seen += 1;
            if seen > limits.max_repo_files {
                return Err(crate::error::Error::TooLarge {
                    what: "repository tree",
                    limit: format!("{} entries", limits.max_repo_files),
                    context: d.display().to_string(),
                });
            }
            if kind == Kind::Dir {
                pending.push(d.join(&name));
            }
            visit(&name.to_string_lossy(), kind);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_model::application::{HelmFileParameter, HelmSource};

    fn tree(files: &[(&str, &str)], links: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, body) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        for (path, target) in links {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, p).unwrap();
        }
        dir
    }

    fn of(
        dir: &tempfile::TempDir,
        kind: SourceType,
        source: &ApplicationSource,
        app: &str,
    ) -> Inputs {
        let repo = RepoDir::open(dir.path()).unwrap();
        inputs(
            kind,
            source,
            &repo,
            Path::new(app),
            None,
            &Limits::default(),
        )
        .unwrap()
    }

    fn paths(list: &[&str]) -> Inputs {
        Inputs::Paths(list.iter().map(PathBuf::from).collect())
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n";

    #[test]
    fn the_annotation_names_paths_relative_to_the_app_or_from_the_root() {
        let app = Path::new("apps/payments");
        let got = annotated_paths(" .; /shared/values ;../common;;", app).unwrap();
        let want: BTreeSet<PathBuf> = ["apps/payments", "shared/values", "apps/common"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
        // A glob stands for its directory; an entry climbing out means the whole tree.
        let got = annotated_paths("/charts/*/values.yaml;../../../etc", app).unwrap();
        let want: BTreeSet<PathBuf> = ["charts", ""].iter().map(PathBuf::from).collect();
        assert_eq!(got, want);
        assert_eq!(annotated_paths(" ; ", app), None);
        assert_eq!(annotated_paths("", app), None);
    }

    #[test]
    fn the_annotation_wins_over_detection() {
        let dir = tree(&[("apps/a/cm.yaml", CM)], &[]);
        let repo = RepoDir::open(dir.path()).unwrap();
        let got = inputs(
            SourceType::Plugin,
            &ApplicationSource::default(),
            &repo,
            Path::new("apps/a"),
            Some("/config"),
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(got, paths(&["config"]));
    }

    #[test]
    fn a_plain_directory_depends_on_itself_only() {
        let dir = tree(
            &[
                ("apps/a/cm.yaml", CM),
                ("apps/a/sub/x.json", "{}"),
                ("apps/b/cm.yaml", CM),
            ],
            &[],
        );
        let src = ApplicationSource::default();
        assert_eq!(
            of(&dir, SourceType::Directory, &src, "apps/a"),
            paths(&["apps/a"])
        );
    }

    #[test]
    fn a_directory_with_a_link_or_jsonnet_depends_on_the_tree() {
        let dir = tree(
            &[("apps/a/cm.yaml", CM), ("shared/x.yaml", CM)],
            &[("apps/a/x.yaml", "../../shared/x.yaml")],
        );
        let src = ApplicationSource::default();
        assert_eq!(
            of(&dir, SourceType::Directory, &src, "apps/a"),
            Inputs::Tree
        );
        let dir = tree(
            &[
                ("apps/a/main.jsonnet", "import '../../lib/x.libsonnet'"),
                ("lib/x.libsonnet", "{}"),
            ],
            &[],
        );
        assert_eq!(
            of(&dir, SourceType::Directory, &src, "apps/a"),
            Inputs::Tree
        );
    }

    #[test]
    fn a_chart_depends_on_itself_and_its_value_files() {
        let dir = tree(
            &[
                (
                    "charts/api/Chart.yaml",
                    "apiVersion: v2\nname: api\nversion: 1.0.0\n",
                ),
                ("charts/api/templates/cm.yaml", CM),
                ("envs/prod/values.yaml", "replicas: 3\n"),
                ("shared/ca.pem", "x"),
            ],
            &[],
        );
        let src = ApplicationSource {
            helm: Some(HelmSource {
                value_files: Some(vec![
                    "../../envs/prod/values.yaml".into(),
                    "$values/x.yaml".into(),
                ]),
                file_parameters: Some(vec![HelmFileParameter {
                    name: Some("ca".into()),
                    path: Some("/shared/ca.pem".into()),
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            of(&dir, SourceType::Helm, &src, "charts/api"),
            paths(&["charts/api", "envs/prod/values.yaml", "shared/ca.pem"])
        );
        let url = ApplicationSource {
            helm: Some(HelmSource {
                value_files: Some(vec!["https://example.com/values.yaml".into()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            of(&dir, SourceType::Helm, &url, "charts/api"),
            Inputs::Commit
        );
    }

    #[test]
    fn a_chart_with_a_local_dependency_depends_on_the_tree() {
        let dir = tree(
            &[
                (
                    "charts/api/Chart.yaml",
                    "apiVersion: v2\nname: api\nversion: 1.0.0\ndependencies:\n- name: lib\n  version: 1.0.0\n  repository: file://../lib\n",
                ),
                (
                    "charts/lib/Chart.yaml",
                    "apiVersion: v2\nname: lib\nversion: 1.0.0\n",
                ),
            ],
            &[],
        );
        let src = ApplicationSource::default();
        assert_eq!(of(&dir, SourceType::Helm, &src, "charts/api"), Inputs::Tree);
    }

    #[test]
    fn an_overlay_depends_on_its_bases_and_named_files() {
        let dir = tree(
            &[
                ("base/kustomization.yaml", "resources: [deploy.yaml]\n"),
                ("base/deploy.yaml", CM),
                (
                    "overlays/prod/kustomization.yaml",
                    "resources: [../../base]\npatches:\n- path: ../../patches/replicas.yaml\nreplacements:\n- path: ../../shared/replace.yaml\nnamePrefix: prod-\n",
                ),
                ("patches/replicas.yaml", CM),
                ("shared/replace.yaml", "source: {kind: ConfigMap}\n"),
                ("other/cm.yaml", CM),
            ],
            &[],
        );
        let src = ApplicationSource::default();
        assert_eq!(
            of(&dir, SourceType::Kustomize, &src, "overlays/prod"),
            paths(&[
                "base",
                "overlays/prod",
                "patches/replicas.yaml",
                "shared/replace.yaml"
            ])
        );
    }

    #[test]
    fn a_kustomization_that_is_not_understood_depends_on_the_tree_or_commit() {
        // A path in a field Plumb does not follow.
        let dir = tree(
            &[
                (
                    "app/kustomization.yaml",
                    "metadata:\n  annotations:\n    config: ../shared/replace.yaml\n",
                ),
                ("shared/replace.yaml", "x"),
            ],
            &[],
        );
        let src = ApplicationSource::default();
        assert_eq!(of(&dir, SourceType::Kustomize, &src, "app"), Inputs::Tree);
        // A remote base.
        let dir = tree(
            &[(
                "app/kustomization.yaml",
                "resources:\n- https://github.com/acme/base//deploy?ref=v1\n",
            )],
            &[],
        );
        assert_eq!(of(&dir, SourceType::Kustomize, &src, "app"), Inputs::Commit);
        // A link inside a base.
        let dir = tree(
            &[
                ("base/kustomization.yaml", "resources: [cm.yaml]\n"),
                ("app/kustomization.yaml", "resources: [../base]\n"),
                ("x.yaml", CM),
            ],
            &[("base/cm.yaml", "../x.yaml")],
        );
        assert_eq!(of(&dir, SourceType::Kustomize, &src, "app"), Inputs::Tree);
    }

    #[test]
    fn plugins_and_jsonnet_sources_depend_on_the_commit() {
        let dir = tree(&[("app/x.yaml", CM)], &[]);
        let src = ApplicationSource::default();
        assert_eq!(of(&dir, SourceType::Plugin, &src, "app"), Inputs::Commit);
    }
}
