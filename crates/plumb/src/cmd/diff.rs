//! `plumb diff`: desired objects (files or directories) against live objects (files or
//! directories, e.g. saved `kubectl get -o yaml` output), with no cluster. Output is Argo CD's
//! `argocd app diff` format; exit code 0 means no difference, 1 differences, 2 an error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{ArgAction, Args, ValueEnum};
use plumb_diff::{
    Action, DiffConfig, DiffFormat, DiffSettings, ExternalDiff, IgnoreOptions, IgnoreRule,
    IgnoreRules, PairOptions, RenderOptions, SourcedObject, Strategy, application_rules,
};
use plumb_model::Settings;
use serde_json::Value;

use crate::exit::Outcome;

/// Compare desired objects with live objects offline, as `argocd app diff` shows them.
///
/// Objects are paired by group, kind, namespace and name. The live object's
/// last-applied-configuration is the base of a three-way comparison, so fields the API server
/// defaulted never show; Secret values are masked. After each differing object, lines starting
/// with `# ` name the field manager that last wrote each differing field (--attribution=false
/// gives output identical to Argo CD's). KUBECTL_EXTERNAL_DIFF selects another diff program, as
/// for kubectl.
///
/// Exit codes: 0 no difference, 1 differences found, 2 an error.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Desired objects: a YAML/JSON file or a directory (read recursively).
    #[arg(long, value_name = "FILE|DIR")]
    desired: PathBuf,

    /// Live objects: a YAML/JSON file or a directory (read recursively).
    #[arg(long, value_name = "FILE|DIR")]
    live: PathBuf,

    /// Settings ConfigMap YAML with argocd-cm keys (ignoreDifferences, compareoptions).
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,

    /// ignoreDifferences rules: a YAML list of rules, or an Application manifest.
    #[arg(long, value_name = "FILE")]
    ignore_differences: Option<PathBuf>,

    /// Diff offline (three-way, on the last-applied configuration).
    ///
    /// This command has no cluster to ask yet, so it always diffs offline; the flag is
    /// accepted so pipelines can pin that behaviour once server-side diff is available here.
    #[arg(long)]
    offline: bool,

    /// Also show live objects that are not desired (as removals).
    #[arg(long)]
    show_extra: bool,

    /// Namespace for namespaced desired objects that have none.
    #[arg(long, short = 'n', value_name = "NS", default_value = "default")]
    namespace: String,

    /// Text format of each object's diff: normal (as `diff`), unified, or json.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "normal")]
    diff_format: DiffFormatArg,

    /// Print `# <field>: last written by <manager>` lines (default true; false = Argo's output).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    attribution: bool,

    /// Allow ignore rules that hide images, securityContext, RBAC or webhooks.
    #[arg(long)]
    allow_sensitive_ignores: bool,

    /// Time limit for one jq ignore expression on one object (e.g. 1s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    ignore_normalizer_jq_execution_timeout: Duration,

    /// Output: json prints one JSON document (same as --diff-format json).
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    output: Option<OutputArg>,
}

/// `--diff-format`, shared with `plumb app diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiffFormatArg {
    /// As `diff` prints it (Argo's output).
    Normal,
    /// Unified, with context lines.
    Unified,
    /// One JSON document.
    Json,
}

impl DiffFormatArg {
    pub(crate) fn format(self) -> DiffFormat {
        match self {
            Self::Normal => DiffFormat::Normal,
            Self::Unified => DiffFormat::Unified,
            Self::Json => DiffFormat::Json,
        }
    }
}

/// Render options as kubectl would pick them: `KUBECTL_EXTERNAL_DIFF` replaces the built-in text
/// diff (never the JSON output).
pub(crate) fn render_options(format: DiffFormat, attribution: bool) -> RenderOptions {
    let external = match std::env::var("KUBECTL_EXTERNAL_DIFF") {
        Ok(v) if format != DiffFormat::Json => ExternalDiff::parse(&v),
        _ => None,
    };
    RenderOptions {
        format,
        attribution,
        external,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutputArg {
    Json,
}

// `--ignore-normalizer-jq-execution-timeout` has its own syntax, older than Go's and kept with
// its messages: one number, fractions allowed, with ms, s or m or no unit (seconds). The value is
// Go's reading of it.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or((s, "s"), |i| s.split_at(i));
    if num.parse::<f64>().is_err() {
        return Err(format!("{s:?} is not a duration like 1s or 500ms"));
    }
    if !matches!(unit, "ms" | "s" | "m") {
        return Err(format!("{s:?}: unit must be ms, s or m"));
    }
    let go =
        plumb_model::go::duration::parse(&format!("{num}{unit}")).map_err(|e| e.to_string())?;
    // Neither a sign nor anything but digits and a point got this far: never negative.
    go.to_std()
        .ok_or_else(|| format!("{s:?} is not a duration like 1s or 500ms"))
}

/// Runs `plumb diff`.
pub fn run(args: DiffArgs) -> anyhow::Result<Outcome> {
    let settings = match &args.settings {
        Some(path) => read_settings(path)?,
        None => Settings::default(),
    };
    let diff_settings = DiffSettings::from_settings(&settings)?;
    let mut rules = diff_settings.rules.clone();
    if let Some(path) = &args.ignore_differences {
        rules.extend(read_rules(path)?);
    }
    let opts = IgnoreOptions {
        jq_timeout: args.ignore_normalizer_jq_execution_timeout,
        allow_sensitive: args.allow_sensitive_ignores || diff_settings.allow_sensitive,
        ..IgnoreOptions::default()
    };
    let ignore = IgnoreRules::compile(rules, opts)?;
    let config = DiffConfig::default()
        .normalize(diff_settings.normalize.clone())
        .ignore(ignore)
        // Always computed: JSON output carries it even with --attribution=false, which only
        // removes the comment lines from text output.
        .attribution(true);

    let desired = read_objects(&args.desired)?;
    let live: Vec<Value> = read_objects(&args.live)?
        .into_iter()
        .map(|o| o.value)
        .collect();
    let pair_opts = PairOptions {
        default_namespace: args.namespace.clone(),
        ..Default::default()
    };
    let pairs = plumb_diff::pair(desired, live, &pair_opts)?;

    let mut shown = Vec::new();
    for p in &pairs {
        let result = plumb_diff::diff(p, Strategy::ThreeWay, &config)?;
        for note in &result.notes {
            eprintln!("plumb: note: {note}");
        }
        let show = result.modified || (args.show_extra && result.action == Action::Extra);
        if show {
            shown.push(plumb_diff::mask(&result));
        }
    }
    let format = match args.output {
        Some(OutputArg::Json) => DiffFormat::Json,
        None => args.diff_format.format(),
    };
    let render_opts = render_options(format, args.attribution);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    plumb_diff::render(&shown, &render_opts, &mut out).context("writing the diff")?;
    out.flush().ok();
    Ok(if shown.is_empty() {
        Outcome::Success
    } else {
        Outcome::Negative
    })
}

/// Reads a settings ConfigMap.
pub(crate) fn read_settings(path: &Path) -> anyhow::Result<Settings> {
    let text = read_capped(path, max_file_bytes())?;
    let docs = plumb_yaml::read_documents(&text, &path.display().to_string())?;
    let Some(doc) = docs.into_iter().next() else {
        bail!("{}: no settings ConfigMap in the file", path.display());
    };
    Ok(Settings::from_config_map(&doc.value))
}

/// Reads ignore rules: a YAML list of rules, or Application manifests.
pub(crate) fn read_rules(path: &Path) -> anyhow::Result<Vec<IgnoreRule>> {
    let name = path.display().to_string();
    let text = read_capped(path, max_file_bytes())?;
    let mut rules = Vec::new();
    for doc in plumb_yaml::read_documents(&text, &name)? {
        match &doc.value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mut rule: IgnoreRule =
                        serde_json::from_value(item.clone()).with_context(|| {
                            format!("{name}: rule {i} is not an ignoreDifferences entry")
                        })?;
                    rule.origin = format!("{name}[{i}]");
                    rules.push(rule);
                }
            }
            app => rules.extend(application_rules(app, &name)?),
        }
    }
    Ok(rules)
}

/// Largest single input file (the largest rendered output Plumb accepts from one source).
fn max_file_bytes() -> u64 {
    plumb_source::Limits::default().max_render_bytes
}

/// Largest total of the files read for one of `--desired` / `--live` (the largest repository
/// tree Plumb expands).
fn max_input_bytes() -> u64 {
    plumb_source::Limits::default().max_repo_bytes
}

/// Every object in a file, or in the YAML/JSON files under a directory (sorted by path).
fn read_objects(path: &Path) -> anyhow::Result<Vec<SourcedObject>> {
    let mut files = Vec::new();
    if path.is_dir() {
        let mut visited = std::collections::BTreeSet::new();
        let real = std::fs::canonicalize(path)
            .with_context(|| format!("reading directory {}", path.display()))?;
        visited.insert(real);
        collect_files(path, &mut visited, &mut files)?;
        files.sort();
    } else {
        files.push(path.to_path_buf());
    }
    let mut out = Vec::new();
    let mut total = 0u64;
    for file in files {
        let name = file.display().to_string();
        let text = read_capped(&file, max_file_bytes())?;
        total += text.len() as u64;
        if total > max_input_bytes() {
            bail!(
                "{}: the files read exceed {} bytes in total (reached at {name})",
                path.display(),
                max_input_bytes()
            );
        }
        let docs = plumb_yaml::flatten_lists(plumb_yaml::read_documents(&text, &name)?);
        for doc in docs {
            out.push(SourcedObject {
                value: doc.value,
                source: format!("{name}:{}", doc.line),
            });
        }
    }
    Ok(out)
}

/// Reads a text file, refusing one larger than `max` bytes without reading past the limit.
fn read_capped(file: &Path, max: u64) -> anyhow::Result<String> {
    use std::io::Read;
    let name = file.display();
    let handle = std::fs::File::open(file).with_context(|| format!("reading {name}"))?;
    let mut bytes = Vec::new();
    handle
        .take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {name}"))?;
    if bytes.len() as u64 > max {
        bail!("{name}: file exceeds the limit of {max} bytes");
    }
    String::from_utf8(bytes).with_context(|| format!("{name}: file is not UTF-8"))
}

/// Collects the YAML/JSON files under `dir`. Links are followed, but a link to a directory
/// already being read (a loop such as `a/up -> ..`) is an error naming it, and a directory
/// reached twice through links is read once.
fn collect_files(
    dir: &Path,
    visited: &mut std::collections::BTreeSet<PathBuf>,
    out: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let mut entries = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("reading directory {}", dir.display()))?
    {
        entries.push(entry?.path());
    }
    entries.sort();
    for path in entries {
        let link = std::fs::symlink_metadata(&path)
            .with_context(|| format!("reading {}", path.display()))?
            .is_symlink();
        // Following the link: a link that loops on itself fails here (ELOOP) and is named.
        let meta = std::fs::metadata(&path).with_context(|| {
            let target = std::fs::read_link(&path).unwrap_or_default();
            format!(
                "reading {} (symlink to {}: a loop, or a missing target)",
                path.display(),
                target.display()
            )
        })?;
        if meta.is_dir() {
            let real = std::fs::canonicalize(&path)
                .with_context(|| format!("reading directory {}", path.display()))?;
            if link && dir.canonicalize().is_ok_and(|d| d.starts_with(&real)) {
                bail!(
                    "{}: symlink to {} leads back into a directory being read (a loop)",
                    path.display(),
                    std::fs::read_link(&path).unwrap_or_default().display()
                );
            }
            if !visited.insert(real) {
                continue;
            }
            collect_files(&path, visited, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: DiffArgs,
    }

    fn parse(args: &[&str]) -> DiffArgs {
        let mut all = vec!["plumb", "--desired", "d", "--live", "l"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).unwrap().args
    }

    #[test]
    fn test_attribution() {
        assert!(parse(&[]).attribution);
        assert!(!parse(&["--attribution=false"]).attribution);
    }

    #[test]
    fn test_diff_format_and_output() {
        assert_eq!(parse(&[]).diff_format, DiffFormatArg::Normal);
        assert_eq!(
            parse(&["--diff-format", "unified"]).diff_format,
            DiffFormatArg::Unified
        );
        assert_eq!(parse(&["-o", "json"]).output, Some(OutputArg::Json));
    }

    #[test]
    fn test_jq_timeout() {
        assert_eq!(
            parse(&[]).ignore_normalizer_jq_execution_timeout,
            Duration::from_secs(1)
        );
        let a = parse(&["--ignore-normalizer-jq-execution-timeout", "250ms"]);
        assert_eq!(
            a.ignore_normalizer_jq_execution_timeout,
            Duration::from_millis(250)
        );
        assert!(parse_duration("2h").is_err());
    }

    #[test]
    fn test_flags() {
        let a = parse(&[
            "--offline",
            "--show-extra",
            "--allow-sensitive-ignores",
            "-n",
            "payments",
        ]);
        assert!(a.offline && a.show_extra && a.allow_sensitive_ignores);
        assert_eq!(a.namespace, "payments");
    }
}
