//! Config management plugins: Argo CD's `ConfigManagementPlugin` files, loaded from a directory
//! the administrator configures, selected by `spec.source.plugin.name` or by their `discover`
//! rules, and run by Plumb in a render worker with the render limits, Argo's environment and
//! (where the machine allows) no network and a read-only view of the cache ([`crate::worker`]).

pub(crate) mod env;
pub mod spec;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use globset::GlobBuilder;
use plumb_model::application::PluginSource;
use sha2::{Digest, Sha256};

use crate::beneath::{Kind, RepoDir};
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::limits::Limits;
use crate::manifest::{self, Manifest};
use crate::redact::Redactor;
use crate::worker::protocol::{EXEC_FAILED, EXIT_NOT_FOUND};
use crate::worker::supervise::{self, Bounds, Task};
use crate::worker::{Worker, sandbox};

use spec::{NETWORK_ANNOTATION, PluginCommand, PluginFile};

/// Largest plugin file read.
const MAX_PLUGIN_FILE: u64 = 1 << 20;
/// Largest output of a discovery or parameters command.
const MAX_SMALL_OUTPUT: u64 = 1 << 20;

/// One usable plugin.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// `<metadata.name>-<spec.version>`, or the name alone without a version (Argo's naming,
    /// what `spec.source.plugin.name` must say).
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The file's content.
    pub spec: PluginFile,
    /// SHA-256 of the content (part of the manifest cache key: a changed plugin renders again).
    pub digest: String,
}

impl Plugin {
    /// True when the plugin asked for network access (annotation `plumb.dev/network: "true"`).
    pub fn wants_network(&self) -> bool {
        self.spec
            .metadata
            .annotations
            .get(NETWORK_ANNOTATION)
            .is_some_and(|v| v == "true")
    }
}

/// The plugins of a directory, sorted by name (the order discovery tries them in, as Argo tries
/// its sidecars' sockets in directory order), and the files that could not be used.
#[derive(Debug, Clone, Default)]
pub struct PluginSet {
    pub plugins: Vec<Plugin>,
    /// Files that are not valid plugins, with why (named in "not found" errors).
    pub invalid: Vec<(PathBuf, String)>,
}

/// Reads every `*.yaml` / `*.yml` file of `dir` and every `<dir>/<sub>/plugin.yaml` (hidden
/// entries skipped: a mounted ConfigMap's `..data` links). A directory that does not exist holds
/// no plugins.
pub fn load(dir: &Path) -> Result<PluginSet> {
    let mut set = PluginSet::default();
    let listing = match std::fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(set),
        Err(e) => return Err(Error::io("reading", dir)(e)),
    };
    let mut files = Vec::new();
    for entry in listing.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            let inner = path.join("plugin.yaml");
            if inner.is_file() {
                files.push(inner);
            }
        } else if (name.ends_with(".yaml") || name.ends_with(".yml")) && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    for file in files {
        match read_plugin(&file) {
            Ok(p) => {
                if set.plugins.iter().any(|q| q.name == p.name) {
                    set.invalid.push((
                        file,
                        format!("a plugin named {} is already defined", p.name),
                    ));
                } else {
                    set.plugins.push(p);
                }
            }
            Err(why) => {
                tracing::warn!(file = %file.display(), "config management plugin ignored: {why}");
                set.invalid.push((file, why));
            }
        }
    }
    set.plugins.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(set)
}

fn read_plugin(file: &Path) -> std::result::Result<Plugin, String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_PLUGIN_FILE).read_to_string(&mut text))
        .map_err(|e| format!("reading it: {e}"))?;
    let shown = file.display().to_string();
    let docs = plumb_yaml::read_documents(&text, &shown).map_err(|e| e.to_string())?;
    let doc = docs
        .into_iter()
        .find(|d| !d.value.is_null())
        .ok_or("the file is empty")?;
    let spec: PluginFile = serde_json::from_value(doc.value).map_err(|e| e.to_string())?;
    spec::validate(&spec)?;
    if spec.spec.provide_git_creds {
        tracing::warn!(file = %shown, "provideGitCreds is ignored: Plumb never gives plugins repository credentials");
    }
    let name = if spec.spec.version.is_empty() {
        spec.metadata.name.clone()
    } else {
        format!("{}-{}", spec.metadata.name, spec.spec.version)
    };
    let digest = Sha256::digest(serde_json::to_string(&spec).unwrap_or_default().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Plugin {
        name,
        file: file.to_path_buf(),
        spec,
        digest,
    })
}

/// Most discovery results kept; past it the memo starts again (a bound, not an eviction policy:
/// a miss only costs one run of the command).
const MAX_DISCOVERY_MEMO: usize = 10_000;

/// What each plugin's `discover.find.command` answered, per plugin (name and file digest),
/// repository, commit and source path: the answer is a function of the files it looks at, and
/// a commit's files never change, so the command runs once per commit instead of at every
/// reconcile. A hard refresh asks again; a working tree (`--local`, no commit) is never kept.
#[derive(Debug, Default)]
pub(crate) struct DiscoveryMemo {
    answers: Mutex<HashMap<String, bool>>,
}

impl DiscoveryMemo {
    fn get(&self, key: &str) -> Option<bool> {
        self.answers.lock().ok()?.get(key).copied()
    }

    fn put(&self, key: String, matched: bool) {
        if let Ok(mut map) = self.answers.lock() {
            if map.len() >= MAX_DISCOVERY_MEMO {
                map.clear();
            }
            map.insert(key, matched);
        }
    }
}

/// Which memo entry a source's discovery uses: its repository, commit and path; `refresh`
/// (a hard refresh) runs the command again and replaces the entry.
pub(crate) struct MemoScope<'a> {
    pub memo: &'a DiscoveryMemo,
    pub scope: String,
    pub refresh: bool,
}

/// Where and how a plugin's commands run.
pub(crate) struct Run<'a> {
    /// The tree (checkout or local directory) and the source directory in it.
    pub repo: &'a RepoDir,
    pub app: &'a Path,
    /// The variables Argo passes ([`env::environ`]).
    pub env: Vec<(String, String)>,
    pub worker: &'a Worker,
    pub limits: &'a Limits,
    pub redactor: &'a Redactor,
    /// What the plugin sees: the cache and credentials hidden, the tree shown read-only (the
    /// network is the plugin's own choice).
    pub view: sandbox::View,
    /// Where `find.command` answers are kept (`None`: a working tree, always asked).
    pub memo: Option<MemoScope<'a>>,
}

/// The plugin a source with `plugin:` uses: the one `plugin.name` names (which must also match
/// the source when it has discovery rules, as in Argo), or without a name the first whose
/// discovery matches.
pub(crate) fn select<'s>(
    set: &'s PluginSet,
    run: &Run<'_>,
    source: &PluginSource,
    dir: &Path,
) -> Result<&'s Plugin> {
    let name = source.name.as_deref().unwrap_or_default();
    if name.is_empty() {
        return discover(set, run)?.ok_or_else(|| Error::Plugin {
            plugin: "(discovery)".into(),
            detail: format!(
                "could not find plugin supporting the given repository (plugins in {}: {})",
                dir.display(),
                names(set)
            ),
        });
    }
    let not_found = |extra: &str| Error::Plugin {
        plugin: name.to_owned(),
        detail: format!(
            "couldn't find plugin with name {name:?} supporting the given repository{extra} (plugins in {}: {}{})",
            dir.display(),
            names(set),
            invalid_note(set)
        ),
    };
    if !spec::valid_name(name) {
        return Err(not_found(": not a plugin name"));
    }
    let plugin = set
        .plugins
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| not_found(""))?;
    match plugin
        .spec
        .spec
        .discover
        .as_ref()
        .filter(|d| d.is_enabled())
    {
        // Without discovery rules a named plugin applies to anything.
        None => Ok(plugin),
        Some(_) if matches(plugin, run)? => Ok(plugin),
        Some(_) => Err(not_found(": its discover rules do not match")),
    }
}

/// The first plugin (by name) whose discovery rules match the source; plugins without rules are
/// used only by name.
pub(crate) fn discover<'s>(set: &'s PluginSet, run: &Run<'_>) -> Result<Option<&'s Plugin>> {
    for p in &set.plugins {
        let enabled = p
            .spec
            .spec
            .discover
            .as_ref()
            .is_some_and(|d| d.is_enabled());
        if !enabled {
            continue;
        }
        match matches(p, run) {
            Ok(true) => return Ok(Some(p)),
            Ok(false) => {}
            // Argo logs a failing discovery and tries the next plugin.
            Err(e) => tracing::warn!(plugin = %p.name, "plugin discovery failed: {e}"),
        }
    }
    Ok(None)
}

fn names(set: &PluginSet) -> String {
    if set.plugins.is_empty() {
        "none".into()
    } else {
        set.plugins
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn invalid_note(set: &PluginSet) -> String {
    set.invalid
        .iter()
        .map(|(f, why)| format!("; {} ignored: {why}", f.display()))
        .collect()
}

/// Argo's `matchRepository`: `fileName` (a glob in the source directory), else `find.glob`
/// (`**` allowed), else `find.command` (any output is a match).
fn matches(p: &Plugin, run: &Run<'_>) -> Result<bool> {
    let Some(d) = &p.spec.spec.discover else {
        return Ok(false);
    };
    if !d.file_name.is_empty() {
        return glob_matches(run, &d.file_name, false);
    }
    if !d.find.glob.is_empty() {
        return glob_matches(run, &d.find.glob, true);
    }
    if !d.find.command.command.is_empty() {
        let key = run
            .memo
            .as_ref()
            .map(|m| format!("{}\n{}\n{}", p.name, p.digest, m.scope));
        if let (Some(m), Some(key)) = (&run.memo, &key)
            && !m.refresh
            && let Some(matched) = m.memo.get(key)
        {
            return Ok(matched);
        }
        // A failing command is not kept: it may be a passing fault.
        let out = command(p, run, "discover", &d.find.command, MAX_SMALL_OUTPUT)?;
        let matched = !out.trim().is_empty();
        if let (Some(m), Some(key)) = (&run.memo, key) {
            m.memo.put(key, matched);
        }
        return Ok(matched);
    }
    Ok(false)
}

/// True when a file or directory under the source directory matches `pattern` (relative to the
/// source directory). A pattern that climbs out of the repository matches nothing.
fn glob_matches(run: &Run<'_>, pattern: &str, double_star: bool) -> Result<bool> {
    let Some(full) = normalize_within(&run.app.join(pattern)) else {
        return Ok(false);
    };
    let mut glob = full.display().to_string();
    if !double_star {
        // filepath.Glob has no `**`: it is two `*`, each within one directory.
        glob = glob.replace("**", "*");
    }
    let matcher = GlobBuilder::new(&glob)
        .literal_separator(true)
        .build()
        .map_err(|e| Error::Plugin {
            plugin: "(discovery)".into(),
            detail: format!("invalid glob {pattern:?}: {e}"),
        })?
        .compile_matcher();
    // Walk the repository from the pattern's literal prefix (a pattern may name `../x` inside
    // the repository), bounded by the file count limit.
    let start: PathBuf = full
        .components()
        .take_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .collect();
    let start = if run.repo.is_dir(&start) {
        start
    } else {
        match start.parent() {
            Some(p) => p.to_path_buf(),
            None => return Ok(false),
        }
    };
    if matcher.is_match(&start) && run.repo.exists(&start) {
        return Ok(true);
    }
    let mut seen = 0u64;
    let mut pending = vec![start];
    while let Some(dir) = pending.pop() {
        if !run.repo.is_dir(&dir) {
            continue;
        }
        for (name, kind) in run.repo.entries(&dir)? {
            seen += 1;
            if seen > run.limits.max_repo_files {
                return Ok(false);
            }
            let child = dir.join(&name);
            if matcher.is_match(&child) {
                return Ok(true);
            }
            if kind == Kind::Dir {
                pending.push(child);
            }
        }
    }
    Ok(false)
}

/// Runs `init` (when set) and `generate`, and reads the output as manifests.
pub(crate) fn generate(p: &Plugin, run: &Run<'_>) -> Result<Vec<Manifest>> {
    if let Some(init) = p.spec.spec.init.as_ref().filter(|c| !c.command.is_empty()) {
        command(p, run, "init", init, run.limits.max_render_bytes)?;
    }
    let out = command(
        p,
        run,
        "generate",
        &p.spec.spec.generate,
        run.limits.max_render_bytes,
    )?;
    let label = format!("plugin {} generate", p.name);
    manifest::from_stream(&out, &label, |_| None)
}

/// The plugin's parameter announcements as Argo's `GetParametersAnnouncement` builds them: the
/// dynamic command's JSON array first, then the static ones.
pub(crate) fn announcements(p: &Plugin, run: &Run<'_>) -> Result<Vec<serde_json::Value>> {
    let Some(params) = &p.spec.spec.parameters else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if let Some(dynamic) = params.dynamic.as_ref().filter(|c| !c.command.is_empty()) {
        let text = command(p, run, "parameters", dynamic, MAX_SMALL_OUTPUT)?;
        let list: Vec<serde_json::Value> =
            serde_json::from_str(&text).map_err(|e| Error::Plugin {
                plugin: p.name.clone(),
                detail: format!("parameters.dynamic printed something that is not a JSON array of announcements: {e}"),
            })?;
        out.extend(list);
    }
    out.extend(params.static_.iter().cloned());
    Ok(out)
}

/// Runs one of the plugin's commands in the source directory, in a render worker with the
/// render limits, only Argo's environment, and the plugin's namespaces when available.
fn command(
    p: &Plugin,
    run: &Run<'_>,
    what: &str,
    c: &PluginCommand,
    max_stdout: u64,
) -> Result<String> {
    let argv = c.argv();
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::Plugin {
            plugin: p.name.clone(),
            detail: format!("{what}: the command is empty"),
        });
    };
    let scratch = tempfile::Builder::new()
        .prefix("plumb-plugin-")
        .tempdir()
        .map_err(Error::io("creating", std::env::temp_dir()))?;
    let view = sandbox::View {
        network: p.wants_network(),
        ..run.view.clone()
    };
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let mut cmd = match sandbox::command(run.worker, &view, program.as_ref(), &args) {
        Some(cmd) => cmd,
        None => {
            let mut cmd = Command::new(program);
            cmd.args(&args);
            cmd
        }
    };
    let path = std::env::var_os("PATH").unwrap_or_else(|| {
        OsString::from("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    });
    cmd.current_dir(run.repo.root().join(run.app))
        .env("PATH", path)
        .env("HOME", scratch.path())
        .env("TMPDIR", scratch.path());
    for (k, v) in &run.env {
        cmd.env(k, v);
    }
    let label = format!("plugin {} {what}", p.name);
    let bounds = Bounds {
        timeout: run.limits.render_timeout,
        memory_bytes: run.limits.render_memory_bytes,
        max_stdout,
    };
    let done = supervise::run(
        run.worker,
        &label,
        Task::ExecIsolated(&cmd),
        &bounds,
        run.redactor,
    )?;
    if !done.status.success() {
        let missing = done.status.code() == Some(i32::from(EXIT_NOT_FOUND))
            && done.stderr.contains(EXEC_FAILED);
        let detail = if missing {
            format!("{what}: cannot run {program:?}: no such program")
        } else {
            format!(
                "{what} `{}` failed ({}): {}",
                argv.join(" "),
                done.status,
                bounded(&done.stderr)
            )
        };
        return Err(Error::Plugin {
            plugin: p.name.clone(),
            detail,
        });
    }
    String::from_utf8(done.stdout).map_err(|_| Error::Plugin {
        plugin: p.name.clone(),
        detail: format!("{what}: the output is not UTF-8"),
    })
}

/// At most 4 KiB of standard error in a message (it lands in the Application's conditions).
fn bounded(stderr: &str) -> String {
    const MAX: usize = 4 << 10;
    if stderr.len() <= MAX {
        return stderr.to_owned();
    }
    let mut end = MAX;
    while !stderr.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &stderr[..end], stderr.len())
}
