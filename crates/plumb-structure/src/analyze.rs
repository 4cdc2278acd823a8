//! Reading a workspace's crates and checking each.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::functions::functions;
use crate::graph::circles;
use crate::model::{Analysis, CrateReport};
use crate::tree::build;

/// Checks every `crates/*/src` under the workspace `root`.
pub fn analyze_workspace(root: &Path) -> Result<Analysis, Error> {
    let crates_dir = root.join("crates");
    let mut crates = Vec::new();
    for dir in sorted_entries(&crates_dir)? {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut sources = BTreeMap::new();
        read_sources(&src, "src", &mut sources)?;
        crates.push(analyze_sources(&name, &sources)?);
    }
    if crates.is_empty() {
        return Err(Error::NoCrates(root.to_path_buf()));
    }
    Ok(Analysis { crates })
}

/// Checks one crate from its files: keys are paths relative to the crate directory with `/`
/// separators (`src/lib.rs`), values their text. Paths in the report read `crates/<name>/<key>`.
pub fn analyze_sources(
    name: &str,
    sources: &BTreeMap<String, String>,
) -> Result<CrateReport, Error> {
    let prefix = format!("crates/{name}/");
    let tree = build(sources, &roots(sources))?;
    let mut report = CrateReport {
        name: name.to_owned(),
        ..CrateReport::default()
    };
    for (key, ast) in &tree.files {
        let text = sources.get(key).map_or("", String::as_str);
        let found = functions(ast, text, &format!("{prefix}{key}"));
        report.lines += text.lines().count().saturating_sub(found.test_lines);
        report.functions.extend(found.functions);
    }
    report.circles = circles(&tree, &prefix);
    report.unreached = sources
        .keys()
        .filter(|k| !tree.files.contains_key(*k) && !tree.test_files.contains(*k))
        .map(|k| format!("{prefix}{k}"))
        .collect();
    Ok(report)
}

/// The crate roots among `sources`: the library, the main binary, and `src/bin` binaries.
fn roots(sources: &BTreeMap<String, String>) -> Vec<String> {
    sources
        .keys()
        .filter(|key| {
            let key = key.as_str();
            key == "src/lib.rs"
                || key == "src/main.rs"
                || key.strip_prefix("src/bin/").is_some_and(|rest| {
                    rest.ends_with(".rs")
                        && (!rest.contains('/') || rest.ends_with("/main.rs"))
                        && rest.matches('/').count() <= 1
                })
        })
        .cloned()
        .collect()
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let read_err = |source| Error::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(read_err)? {
        entries.push(entry.map_err(read_err)?.path());
    }
    entries.sort();
    Ok(entries)
}

/// Reads every `.rs` file under `dir` into `out`, keyed `<key>/<relative path>`.
fn read_sources(dir: &Path, key: &str, out: &mut BTreeMap<String, String>) -> Result<(), Error> {
    for path in sorted_entries(dir)? {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let child_key = format!("{key}/{name}");
        if path.is_dir() {
            read_sources(&path, &child_key, out)?;
        } else if name.ends_with(".rs") {
            let text = fs::read_to_string(&path).map_err(|source| Error::Read { path, source })?;
            out.insert(child_key, text);
        }
    }
    Ok(())
}
