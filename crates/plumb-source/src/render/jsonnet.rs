//! Jsonnet evaluation with rsjsonnet-lang, in a render worker process ([`crate::worker`]): the
//! evaluator has no memory bound and cannot be interrupted, so it runs where the kernel bounds its
//! memory and where a timeout can kill it.
//!
//! Why rsjsonnet-lang: it has stable semver releases and targets Jsonnet 0.20 (the language of
//! go-jsonnet, which Argo CD embeds), while jrsonnet-evaluator only publishes pre-releases with API
//! churn between them. Its import hook lets Plumb resolve imports itself, so an `import` or a
//! library path that leaves the repository is refused (Argo CD checks `libs` the same way), and
//! every file is opened beneath the checkout root ([`RepoDir`]), so a symlink chain cannot lead
//! an `import` or `importstr` out of it.
//!
//! Argo semantics (`reposerver/repository/repository.go: evaluateJsonnet`): `extVars` and `tlas`
//! are strings or code, `libs` are search paths relative to the repository root, and the output is
//! an object or an array of objects.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use plumb_model::application::JsonnetSource;
use rsjsonnet_lang::arena::Arena;
use rsjsonnet_lang::program::{
    Callbacks, EvalError, EvalStackTraceItem, ImportError, NativeError, Program, Thunk, Value,
};
use rsjsonnet_lang::span::{SpanContextId, SpanId};

use crate::beneath::RepoDir;
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::limits::Limits;
use crate::redact::Redactor;
use crate::spec::{b, v};
use crate::worker::Worker;
use crate::worker::protocol::{JSONNET_ERROR, JSONNET_OK, JsonnetRequest};
use crate::worker::sandbox::View;
use crate::worker::supervise::{self, Bounds, Task};

/// Evaluates `file` (relative to `root`) in a render worker, under the render limits, and
/// returns its JSON output, refusing output larger than `limits.max_render_bytes`.
pub(crate) fn evaluate(
    root: &Path,
    file: &Path,
    opts: &JsonnetSource,
    limits: &Limits,
    worker: &Worker,
    view: Option<&View>,
) -> Result<serde_json::Value> {
    let display = file.display().to_string();
    let what = format!("jsonnet {display}");
    let request = serde_json::to_vec(&JsonnetRequest {
        root: root.to_path_buf(),
        file: file.to_path_buf(),
        opts: opts.clone(),
        max_stack: limits.jsonnet_max_stack,
        max_file_bytes: limits.max_file_bytes,
    })
    .map_err(|e| Error::Jsonnet {
        file: display.clone(),
        detail: format!("encoding the request for the render worker: {e}"),
    })?;
    let bounds = Bounds {
        timeout: limits.render_timeout,
        memory_bytes: limits.render_memory_bytes,
        max_stdout: limits.max_render_bytes + JSONNET_OK.len() as u64,
    };
    let done = supervise::run(
        worker,
        &what,
        Task::Jsonnet(request, view),
        &bounds,
        &Redactor::default(),
    )?;
    let out = match (done.status.success(), done.stdout) {
        (true, out) if out.starts_with(JSONNET_OK.as_bytes()) => out,
        (true, out) if out.starts_with(JSONNET_ERROR.as_bytes()) => {
            return Err(Error::Jsonnet {
                file: display,
                detail: String::from_utf8_lossy(&out[JSONNET_ERROR.len()..]).into_owned(),
            });
        }
        _ => {
            return Err(Error::RenderCrashed {
                what,
                detail: format!("the worker ended ({}): {}", done.status, done.stderr),
            });
        }
    };
    let json = &out[JSONNET_OK.len()..];
    if json.len() as u64 > limits.max_render_bytes {
        return Err(Error::TooLarge {
            what: "rendered output",
            limit: format!("{} bytes", limits.max_render_bytes),
            context: display,
        });
    }
    serde_json::from_slice(json).map_err(|e| Error::Jsonnet {
        file: display,
        detail: format!("output is not JSON: {e}"),
    })
}

struct Files {
    repo: RepoDir,
    /// Largest file an import may read.
    max_file_bytes: u64,
    libs: Vec<PathBuf>,
    /// Span context of each loaded file → (path relative to the root, its text).
    contexts: HashMap<SpanContextId, (PathBuf, Vec<u8>)>,
    last_import_error: Option<String>,
    max_stack: usize,
}

struct Hooks<'p> {
    files: Files,
    thunks: HashMap<PathBuf, Thunk<'p>>,
}

/// Evaluates `file` in this process: the render worker's side of [`evaluate`].
pub(crate) fn run(
    root: &Path,
    file: &Path,
    opts: &JsonnetSource,
    max_stack: usize,
    max_file_bytes: u64,
) -> std::result::Result<String, String> {
    let repo = RepoDir::open(root).map_err(|e| e.to_string())?;
    let mut libs = Vec::new();
    for lib in v(&opts.libs) {
        let rel = normalize_within(Path::new(lib.trim_start_matches("./"))).ok_or_else(|| {
            format!(
                "spec.source.directory.jsonnet.libs: {lib} resolves outside the repository root"
            )
        })?;
        libs.push(rel);
    }
    let arena = Arena::new();
    let mut program = Program::new(&arena);
    program.set_max_stack(max_stack);
    let mut hooks = Hooks {
        files: Files {
            repo,
            max_file_bytes,
            libs,
            contexts: HashMap::new(),
            last_import_error: None,
            max_stack,
        },
        thunks: HashMap::new(),
    };
    for var in v(&opts.ext_vars) {
        let thunk = var_thunk(
            &mut program,
            &mut hooks.files,
            &format!("<extVar {}>", var.name),
            &var.value,
            b(var.code),
        )?;
        let name = program.intern_str(&var.name);
        program.add_ext_var(name, &thunk);
    }
    let main = hooks.load(&mut program, file)?;
    let mut value = program
        .eval_value(&main, &mut hooks)
        .map_err(|e| hooks.files.describe(&program, &e))?;
    if value.is_function() {
        let mut named = Vec::new();
        for tla in v(&opts.tlas) {
            let thunk = var_thunk(
                &mut program,
                &mut hooks.files,
                &format!("<tla {}>", tla.name),
                &tla.value,
                b(tla.code),
            )?;
            named.push((program.intern_str(&tla.name), thunk));
        }
        let func = program.value_to_thunk(&value);
        value = program
            .eval_call(&func, &[], &named, &mut hooks)
            .map_err(|e| hooks.files.describe(&program, &e))?;
    }
    program
        .manifest_json(&value, false)
        .map_err(|e| hooks.files.describe(&program, &e))
}

fn var_thunk<'p>(
    program: &mut Program<'p>,
    files: &mut Files,
    label: &str,
    value: &str,
    code: bool,
) -> std::result::Result<Thunk<'p>, String> {
    if !code {
        return Ok(program.value_to_thunk(&Value::string(value)));
    }
    let (ctx, _) = program
        .span_manager_mut()
        .insert_source_context(value.len());
    files
        .contexts
        .insert(ctx, (PathBuf::from(label), value.as_bytes().to_vec()));
    program
        .load_source(ctx, value.as_bytes(), true, label)
        .map_err(|e| format!("{label}: {e:?}"))
}

impl<'p> Hooks<'p> {
    fn load(
        &mut self,
        program: &mut Program<'p>,
        rel: &Path,
    ) -> std::result::Result<Thunk<'p>, String> {
        if let Some(t) = self.thunks.get(rel) {
            return Ok(t.clone());
        }
        let data = self
            .files
            .repo
            .read(rel, self.files.max_file_bytes)
            .map_err(|e| e.to_string())?;
        let (ctx, _) = program.span_manager_mut().insert_source_context(data.len());
        let name = rel.display().to_string();
        let thunk = program.load_source(ctx, &data, true, &name);
        self.files.contexts.insert(ctx, (rel.to_path_buf(), data));
        let thunk = thunk.map_err(|e| format!("{name}: {e:?}"))?;
        self.thunks.insert(rel.to_path_buf(), thunk.clone());
        Ok(thunk)
    }

    fn resolve(
        &mut self,
        program: &Program<'p>,
        from: SpanId,
        path: &str,
    ) -> std::result::Result<PathBuf, ImportError> {
        let (ctx, _, _) = program.span_manager().get_span(from);
        let base = self
            .files
            .contexts
            .get(&ctx)
            .and_then(|(p, _)| p.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        let mut fail = |msg: String| {
            self.files.last_import_error = Some(msg);
            ImportError
        };
        if Path::new(path).is_absolute() {
            return Err(fail(format!(
                "import {path:?} resolves outside the repository root"
            )));
        }
        let mut escaped = false;
        for dir in std::iter::once(&base).chain(self.files.libs.iter()) {
            match normalize_within(&dir.join(path)) {
                // Resolved beneath the root: a link chain that leads out is named, not followed.
                Some(rel) => match self.files.repo.resolve(&rel) {
                    Err(e) => return Err(fail(e.to_string())),
                    Ok(real) if self.files.repo.is_file(&real) => return Ok(rel),
                    Ok(_) => {}
                },
                None => escaped = true,
            }
        }
        Err(fail(if escaped {
            format!("import {path:?} resolves outside the repository root")
        } else {
            format!(
                "import {path:?} not found (from {} or the libs)",
                base.display()
            )
        }))
    }
}

impl<'p> Callbacks<'p> for Hooks<'p> {
    fn import(
        &mut self,
        program: &mut Program<'p>,
        from: SpanId,
        path: &str,
    ) -> std::result::Result<Thunk<'p>, ImportError> {
        let rel = self.resolve(program, from, path)?;
        self.load(program, &rel).map_err(|e| {
            self.files.last_import_error = Some(e);
            ImportError
        })
    }

    fn import_str(
        &mut self,
        program: &mut Program<'p>,
        from: SpanId,
        path: &str,
    ) -> std::result::Result<String, ImportError> {
        let bytes = self.import_bin(program, from, path)?;
        String::from_utf8(bytes).map_err(|_| {
            self.files.last_import_error = Some(format!("importstr {path:?}: not UTF-8"));
            ImportError
        })
    }

    fn import_bin(
        &mut self,
        program: &mut Program<'p>,
        from: SpanId,
        path: &str,
    ) -> std::result::Result<Vec<u8>, ImportError> {
        let rel = self.resolve(program, from, path)?;
        self.files
            .repo
            .read(&rel, self.files.max_file_bytes)
            .map_err(|e| {
                self.files.last_import_error = Some(e.to_string());
                ImportError
            })
    }

    fn trace(&mut self, _program: &mut Program<'p>, message: &str, _stack: &[EvalStackTraceItem]) {
        tracing::debug!(message, "jsonnet trace");
    }

    fn native_call(
        &mut self,
        _program: &mut Program<'p>,
        _name: rsjsonnet_lang::interner::InternedStr<'p>,
        _args: &[Value<'p>],
    ) -> std::result::Result<Value<'p>, NativeError> {
        Err(NativeError)
    }
}

impl Files {
    /// `file:line: what went wrong` for an evaluation error.
    fn describe(&self, program: &Program<'_>, err: &EvalError) -> String {
        let what = match &err.kind {
            rsjsonnet_lang::program::EvalErrorKind::ExplicitError { message, .. } => {
                format!("error: {message}")
            }
            rsjsonnet_lang::program::EvalErrorKind::ImportFailed { path, .. } => self
                .last_import_error
                .clone()
                .unwrap_or_else(|| format!("import {path:?} failed")),
            rsjsonnet_lang::program::EvalErrorKind::StackOverflow => format!(
                "the call stack exceeded {} frames (infinite recursion?)",
                self.max_stack
            ),
            other => format!("{other:?}"),
        };
        use rsjsonnet_lang::program::EvalErrorKind as K;
        let own_span = match &err.kind {
            K::ExplicitError { span, .. }
            | K::ImportFailed { span, .. }
            | K::AssertFailed { span, .. }
            | K::UnknownObjectField { span, .. }
            | K::InvalidIndexedType { span, .. }
            | K::FieldOfNonObject { span }
            | K::NumericIndexOutOfRange { span, .. } => Some(*span),
            _ => None,
        };
        let span = own_span.or_else(|| {
            err.stack_trace.iter().find_map(|item| match item {
                EvalStackTraceItem::Expr { span } | EvalStackTraceItem::Variable { span, .. } => {
                    Some(*span)
                }
                EvalStackTraceItem::Call { span, .. }
                | EvalStackTraceItem::ArrayItem { span, .. }
                | EvalStackTraceItem::ObjectField { span, .. } => *span,
                _ => None,
            })
        });
        match span.map(|s| program.span_manager().get_span(s)) {
            Some((ctx, start, _)) => match self.contexts.get(&ctx) {
                Some((path, text)) => {
                    let line = text[..start.min(text.len())]
                        .iter()
                        .filter(|b| **b == b'\n')
                        .count()
                        + 1;
                    format!("{}:{line}: {what}", path.display())
                }
                None => what,
            },
            None => what,
        }
    }
}
