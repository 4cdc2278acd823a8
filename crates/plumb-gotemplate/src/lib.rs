//! Go's `text/template` over JSON data, with the function set Argo CD's ApplicationSet controller
//! gives `goTemplate: true` templates: sprig v3's `GenericFuncMap` without `env`, `expandenv` and
//! `getHostByName`, plus Argo's `normalize`, `slugify`, `toYaml`, `fromYaml`, `fromYamlArray`
//! and `tpl`, and Go's builtins.
//!
//! Own code rather than the `gtmpl` crate: gtmpl has no `missingkey` option, no `break`/`continue`,
//! `else with`, range over integers or short-circuit `and`/`or`, its own value type instead of
//! Go's int/float64 distinction, and no bound on steps, depth or output.
//!
//! ```
//! use plumb_gotemplate::{Options, Template};
//! let t = Template::parse("base", "{{ .name | upper }}-{{ index .labels \"env\" }}").unwrap();
//! let data = serde_json::json!({"name": "guestbook", "labels": {"env": "prod"}});
//! assert_eq!(t.execute(&data, &Options::default()).unwrap(), "GUESTBOOK-prod");
//! let strict = Options::from_go_options(&["missingkey=error".to_string()]).unwrap();
//! let err = Template::parse("base", "{{ .nope }}").unwrap().execute(&data, &strict).unwrap_err();
//! assert!(err.to_string().contains("map has no entry for key \"nope\""));
//! ```

mod exec;
mod funcs;
mod gofmt;
mod lex;
mod parse;
mod value;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use value::ExtFn;

/// Largest string a function may build before the output bound is even checked (a `repeat` or
/// `printf` width that would allocate gigabytes fails here first).
pub(crate) const MAX_STRING: usize = 64 << 20;

/// Stack that must remain before the parser or executor nests once more: deep templates fail
/// with an error on any thread (a 2 MiB tokio worker included) instead of overflowing.
pub(crate) const STACK_RESERVE: usize = 256 << 10;

pub(crate) fn stack_low() -> bool {
    stacker::remaining_stack().is_some_and(|r| r < STACK_RESERVE)
}

/// Errors of parsing and executing templates; messages follow Go's text/template.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The template text does not parse (`template: NAME:LINE: ...`).
    #[error("{message}")]
    Parse {
        /// Go-style message.
        message: String,
    },
    /// Execution failed (`template: NAME:LINE:COL: executing "NAME" at <...>: ...`).
    #[error("{message}")]
    Exec {
        /// Go-style message.
        message: String,
    },
    /// A bound of [`Limits`] was reached.
    #[error("{message}")]
    Limit {
        /// What was exceeded.
        message: String,
    },
    /// A `goTemplateOptions` entry Go's `Template.Option` does not know.
    #[error("unrecognized goTemplateOptions entry {0:?} (known: missingkey=default|invalid|zero|error)")]
    Option(String),
}

/// What a missing map key evaluates to (Go's `missingkey=` option).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum MissingKey {
    /// `missingkey=default` / `invalid`: no value, printed as `<no value>`.
    #[default]
    Default,
    /// `missingkey=zero`: the zero value (nil for Argo's `map[string]any`, also `<no value>`).
    Zero,
    /// `missingkey=error`: execution stops.
    Error,
}

/// Bounds on one execution, so hostile templates fail instead of hanging or exhausting memory.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Nodes, commands and loop iterations executed.
    pub max_steps: u64,
    /// Bytes written to the output (and the largest string a function may return).
    pub max_output_bytes: usize,
    /// Nesting of `{{template}}` calls (Go's limit is 100,000; a stack-friendlier one here).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_steps: 5_000_000, max_output_bytes: 4 << 20, max_depth: 1_000 }
    }
}

/// Execution options.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Go's `missingkey` option.
    pub missing_key: MissingKey,
    /// Resource bounds.
    pub limits: Limits,
}

impl Options {
    /// From an ApplicationSet's `goTemplateOptions` (applied in order, as Go's `Option` calls).
    pub fn from_go_options(opts: &[String]) -> Result<Options, Error> {
        let mut o = Options::default();
        for opt in opts {
            o.missing_key = match opt.as_str() {
                "missingkey=default" | "missingkey=invalid" => MissingKey::Default,
                "missingkey=zero" => MissingKey::Zero,
                "missingkey=error" => MissingKey::Error,
                other => return Err(Error::Option(other.to_string())),
            };
        }
        Ok(o)
    }
}

/// Extra functions for templates, beside the default set.
#[derive(Clone, Default)]
pub struct Functions {
    ext: BTreeMap<String, ExtFn>,
    data: BTreeMap<String, BTreeMap<String, ExtFn>>,
}

impl Functions {
    /// No extra functions: the default set only.
    pub fn new() -> Functions {
        Functions::default()
    }

    /// Adds (or replaces, as Go's `Funcs` does) the function `name`.
    pub fn add<F>(&mut self, name: &str, f: F) -> &mut Functions
    where
        F: Fn(&[serde_json::Value]) -> Result<serde_json::Value, String> + Send + Sync + 'static,
    {
        self.ext.insert(name.to_string(), Arc::new(f));
        self
    }

    /// Puts `f` in the data as `.namespace.name`, for `{{ call .namespace.name ARGS }}` (Argo CD
    /// notifications' `.repo`, `.time` and `.strings` helpers are reached that way).
    pub fn add_data<F>(&mut self, namespace: &str, name: &str, f: F) -> &mut Functions
    where
        F: Fn(&[serde_json::Value]) -> Result<serde_json::Value, String> + Send + Sync + 'static,
    {
        self.data.entry(namespace.to_string()).or_default().insert(name.to_string(), Arc::new(f));
        self
    }
}

impl std::fmt::Debug for Functions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Functions")
            .field("ext", &self.ext.keys().collect::<Vec<_>>())
            .field("data", &self.data.iter().map(|(k, v)| (k, v.keys().collect::<Vec<_>>())).collect::<Vec<_>>())
            .finish()
    }
}

/// A parsed template (with its `define`d templates), reusable across executions and threads.
#[derive(Debug, Clone)]
pub struct Template {
    name: String,
    trees: BTreeMap<String, parse::Tree>,
    funcs: Arc<Functions>,
}

impl Template {
    /// Parses `text` under `name` (the name errors show: Argo uses `base`) with the default functions.
    pub fn parse(name: &str, text: &str) -> Result<Template, Error> {
        Template::parse_with(name, text, &Functions::default())
    }

    /// Parses with extra functions.
    pub fn parse_with(name: &str, text: &str, functions: &Functions) -> Result<Template, Error> {
        let funcs = Arc::new(functions.clone());
        let has = |f: &str| funcs.ext.contains_key(f) || funcs::is_defined(f);
        let trees = parse::parse(name, text, &has)?;
        Ok(Template { name: name.to_string(), trees, funcs })
    }

    pub(crate) fn has_function(&self, name: &str) -> bool {
        self.funcs.ext.contains_key(name) || funcs::is_defined(name)
    }

    /// Executes the template on `data` (the `.` of the template).
    pub fn execute(&self, data: &serde_json::Value, options: &Options) -> Result<String, Error> {
        let v = exec::data_value(self, data);
        exec::execute(self, v, options)
    }

    /// The names of the templates defined by the text (its own name included), sorted.
    pub fn template_names(&self) -> Vec<&str> {
        self.trees.keys().map(String::as_str).collect()
    }
}
