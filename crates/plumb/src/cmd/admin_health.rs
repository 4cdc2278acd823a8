//! `plumb admin health FILE...` and `plumb admin health test DIR`: the health engine, offline.
//!
//! The first evaluates every object in the files (one result per document, in order) with the
//! same rules the controller uses; the second runs Argo CD-format `health_test.yaml` suites
//! against the `health.lua` beside each, so a team can test its fork of Argo's
//! `resource_customizations` library without a cluster.

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use plumb_health::{Assessor, Config, HealthStatus, LuaLimits, LuaScript, UnknownKindHealth};
use plumb_model::{ResourceKey, Settings};
use serde::Serialize;
use serde_json::Value;

use crate::exit::Outcome;

/// Evaluate the health of Kubernetes objects offline.
///
/// Rules apply in Argo CD's order: pending deletion, a Lua script for the kind (from --settings,
/// then --customizations directories), the built-in rule, then Plumb's generic rule for kinds
/// without one (see --unknown-kind-health).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct HealthArgs {
    #[command(subcommand)]
    command: Option<HealthCommand>,

    /// Files of objects (YAML or JSON, several documents allowed; `-` is stdin).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,

    /// Settings ConfigMap YAML with argocd-cm keys (health scripts, plumb.health.unknownKinds).
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,

    /// Directory laid out like Argo CD's resource_customizations (repeatable).
    ///
    /// Scripts are found at <DIR>/<group>/<kind>/health.lua (core kinds: <DIR>/<kind>/health.lua);
    /// `_` in a directory name is a wildcard. Earlier directories win; settings keys win over all.
    #[arg(long = "customizations", value_name = "DIR")]
    customizations: Vec<PathBuf>,

    /// Health for kinds with no rule: generic (default) or none (Argo CD).
    ///
    /// Overrides plumb.health.unknownKinds from --settings. `generic` judges from
    /// observedGeneration and the Ready/Available/Established/Succeeded/Reconciling/Stalled
    /// conditions; `none` gives such objects no health, exactly as Argo CD does.
    #[arg(long, value_enum, value_name = "MODE")]
    unknown_kind_health: Option<UnknownKindArg>,

    /// Output format: wide (a table) or json (one object per line).
    #[arg(short = 'o', long, value_enum, default_value = "wide")]
    output: OutputFormat,
}

#[derive(Debug, Subcommand)]
enum HealthCommand {
    /// Run every health_test.yaml below DIR against the health.lua beside it.
    ///
    /// Uses Argo CD's format: `tests[]` of `healthStatus{status,message}` and `inputPath`
    /// (relative to the test file; the first document of the input is used). A suite with no
    /// health.lua beside it is run against Plumb's own rules. Prints a table of failures and
    /// exits 1 when any test fails.
    Test(TestArgs),
}

#[derive(Debug, Args)]
struct TestArgs {
    /// Directory to search for health_test.yaml files.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum UnknownKindArg {
    Generic,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    Wide,
    Json,
}

/// One line of `-o json`; field order is the contract (`status` first).
#[derive(Serialize)]
struct JsonLine<'a> {
    status: Option<&'a str>,
    message: &'a str,
}

pub fn run(args: HealthArgs) -> anyhow::Result<Outcome> {
    if let Some(HealthCommand::Test(test)) = args.command {
        return run_tests(&test.dir);
    }
    let assessor = build_assessor(&args)?;
    let mut stdout = io::stdout().lock();
    let mut outcome = Outcome::Success;
    let mut rows: Vec<[String; 6]> = Vec::new();
    for file in &args.files {
        let objects = match read_objects(file) {
            Ok(objects) => objects,
            Err(err) => {
                eprintln!("plumb: {err:#}");
                outcome = Outcome::Error;
                continue;
            }
        };
        for obj in objects {
            let health = assessor.assess(&obj);
            match args.output {
                OutputFormat::Json => {
                    let line = JsonLine {
                        status: health.as_ref().map(|h| h.code.as_str()),
                        message: health.as_ref().map_or("", |h| h.message.as_str()),
                    };
                    let text = serde_json::to_string(&line)?;
                    if writeln!(stdout, "{text}").is_err() {
                        return Ok(outcome); // broken pipe: the reader is gone
                    }
                }
                OutputFormat::Wide => rows.push(row(&obj, health.as_ref())),
            }
        }
    }
    if args.output == OutputFormat::Wide {
        let header = ["GROUP", "KIND", "NAMESPACE", "NAME", "HEALTH", "MESSAGE"].map(String::from);
        let _ = stdout.write_all(table(&header, &rows).as_bytes());
    }
    Ok(outcome)
}

fn build_assessor(args: &HealthArgs) -> anyhow::Result<Assessor> {
    let mut config = Config::default();
    if let Some(path) = &args.settings {
        let docs = read_objects(path)?;
        let Some(cm) = docs.first() else {
            bail!("{}: no ConfigMap in the file", path.display())
        };
        config = config.settings(Settings::from_config_map(cm));
    }
    for dir in &args.customizations {
        config = config.customizations_dir(dir);
    }
    match args.unknown_kind_health {
        Some(UnknownKindArg::Generic) => config = config.unknown_kinds(UnknownKindHealth::Generic),
        Some(UnknownKindArg::None) => config = config.unknown_kinds(UnknownKindHealth::None),
        None => {}
    }
    let context = match &args.settings {
        Some(path) => format!("loading health settings from {}", path.display()),
        None => "loading health customizations".to_string(),
    };
    Assessor::new(config).context(context)
}

/// Every object of a file, documents in order (`kind: List` expanded as kubectl does).
fn read_objects(path: &Path) -> anyhow::Result<Vec<Value>> {
    let name = path.display().to_string();
    let text = if name == "-" {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .context("reading stdin")?;
        text
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {name}"))?
    };
    let docs = plumb_yaml::read_documents(&text, &name)?;
    Ok(plumb_yaml::flatten_lists(docs)
        .into_iter()
        .map(|d| d.value)
        .collect())
}

fn row(obj: &Value, health: Option<&HealthStatus>) -> [String; 6] {
    let key = ResourceKey::of(obj);
    let (code, message) = match health {
        Some(h) => (h.code.to_string(), h.message.clone()),
        None => (String::new(), String::new()),
    };
    [key.group, key.kind, key.namespace, key.name, code, message]
}

/// Columns padded to the widest cell plus two spaces; the last column is not padded.
fn table<const N: usize>(header: &[String; N], rows: &[[String; N]]) -> String {
    let mut widths = header.each_ref().map(|h| h.chars().count());
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}  ", width = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `plumb admin health test DIR`.
fn run_tests(dir: &Path) -> anyhow::Result<Outcome> {
    let mut suites = Vec::new();
    find_test_files(dir, &mut suites).with_context(|| format!("reading {}", dir.display()))?;
    suites.sort();
    if suites.is_empty() {
        bail!("{}: no health_test.yaml found", dir.display());
    }
    let limits = LuaLimits::default();
    let (mut passed, mut errors) = (0usize, 0usize);
    let mut failures: Vec<[String; 4]> = Vec::new();
    for suite in &suites {
        let shown = suite
            .strip_prefix(dir)
            .unwrap_or(suite)
            .display()
            .to_string();
        match run_suite(suite, &limits) {
            Ok(results) => {
                for (input, expected, actual) in results {
                    if expected == actual {
                        passed += 1;
                    } else {
                        failures.push([shown.clone(), input, expected, actual]);
                    }
                }
            }
            Err(err) => {
                eprintln!("plumb: {shown}: {err:#}");
                errors += 1;
            }
        }
    }
    let mut stdout = io::stdout().lock();
    if !failures.is_empty() {
        let header = ["FILE", "INPUT", "EXPECTED", "ACTUAL"].map(String::from);
        let _ = stdout.write_all(table(&header, &failures).as_bytes());
    }
    let _ = writeln!(stdout, "{passed} passed, {} failed", failures.len());
    Ok(if errors > 0 {
        Outcome::Error
    } else if failures.is_empty() {
        Outcome::Success
    } else {
        Outcome::Negative
    })
}

fn find_test_files(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            find_test_files(&path, out)?;
        } else if path.file_name().is_some_and(|n| n == "health_test.yaml") {
            out.push(path);
        }
    }
    Ok(())
}

/// Runs one suite: (input path, expected, actual) for each test, as `Status "message"` text.
fn run_suite(suite: &Path, limits: &LuaLimits) -> anyhow::Result<Vec<(String, String, String)>> {
    let base = suite.parent().unwrap_or(Path::new("."));
    let script_path = base.join("health.lua");
    // A suite with no health.lua beside it tests Plumb's own rules for its kinds (the built-in
    // Rust rules, Plumb's scripts, the generic rule), as the controller applies them.
    let script = if script_path.exists() {
        let source = std::fs::read_to_string(&script_path)
            .with_context(|| format!("reading {}", script_path.display()))?;
        // Argo's runner gives every library script the open libraries.
        Some(LuaScript::new(
            source,
            true,
            script_path.display().to_string(),
        ))
    } else {
        None
    };
    let spec = read_objects(suite)?;
    let tests = spec
        .first()
        .and_then(|s| go_field(s, "tests"))
        .and_then(Value::as_array)
        .with_context(|| format!("{}: tests: expected a list", suite.display()))?;
    let mut results = Vec::with_capacity(tests.len());
    for (i, test) in tests.iter().enumerate() {
        let input = go_field(test, "inputPath")
            .and_then(Value::as_str)
            .with_context(|| {
                format!(
                    "{}: tests[{i}].inputPath: expected a string",
                    suite.display()
                )
            })?;
        let want = go_field(test, "healthStatus").unwrap_or(&Value::Null);
        let field = |f: &str| {
            go_field(want, f)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let expected = shown(&field("status"), &field("message"));
        let objects = read_objects(&base.join(input))?;
        let Some(obj) = objects.first() else {
            bail!("{}: tests[{i}]: {input} has no object", suite.display());
        };
        let health = match &script {
            Some(script) => script.evaluate(obj, limits),
            None => plumb_health::assess(obj),
        };
        let actual = match health {
            Some(h) => shown(h.code.as_str(), &h.message),
            None => shown("", ""),
        };
        results.push((input.to_string(), expected, actual));
    }
    Ok(results)
}

/// A field of a test file read as Argo's runner reads it: the file goes through Go's
/// `encoding/json`, which matches field names case-insensitively (`inputpath` is `inputPath`);
/// an exact match is preferred.
fn go_field<'a>(obj: &'a Value, name: &str) -> Option<&'a Value> {
    let map = obj.as_object()?;
    map.get(name).or_else(|| {
        map.iter()
            .find(|(k, _)| k.to_lowercase() == name.to_lowercase())
            .map(|(_, v)| v)
    })
}

fn shown(status: &str, message: &str) -> String {
    let status = if status.is_empty() { "<none>" } else { status };
    format!("{status} {message:?}")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        health: HealthArgs,
    }

    #[test]
    fn parses_files_and_flags() {
        let cli = Cli::try_parse_from([
            "health",
            "a.yaml",
            "b.yaml",
            "--settings",
            "cm.yaml",
            "--customizations",
            "x",
            "--customizations",
            "y",
            "--unknown-kind-health",
            "none",
            "-o",
            "json",
        ])
        .unwrap();
        let h = cli.health;
        assert_eq!(h.files, [PathBuf::from("a.yaml"), PathBuf::from("b.yaml")]);
        assert_eq!(h.settings, Some(PathBuf::from("cm.yaml")));
        assert_eq!(h.customizations, [PathBuf::from("x"), PathBuf::from("y")]);
        assert_eq!(h.unknown_kind_health, Some(UnknownKindArg::None));
        assert_eq!(h.output, OutputFormat::Json);
        assert!(h.command.is_none());
    }

    #[test]
    fn parses_test_subcommand_without_files() {
        let cli = Cli::try_parse_from(["health", "test", "lib"]).unwrap();
        match cli.health.command {
            Some(HealthCommand::Test(t)) => assert_eq!(t.dir, PathBuf::from("lib")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rejects_bad_values_and_missing_files() {
        assert!(
            Cli::try_parse_from(["health", "a.yaml", "--unknown-kind-health", "kstatus"]).is_err()
        );
        assert!(Cli::try_parse_from(["health", "a.yaml", "-o", "yaml"]).is_err());
        assert!(Cli::try_parse_from(["health"]).is_err());
    }

    #[test]
    fn json_line_puts_status_first() {
        let line = JsonLine {
            status: None,
            message: "",
        };
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"status":null,"message":""}"#
        );
    }
}
