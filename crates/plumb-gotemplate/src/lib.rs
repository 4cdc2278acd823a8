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

mod errors;
mod exec;
mod funcs;
mod gofmt;
mod golayout;
mod lex;
mod parse;
mod program;
mod value;

use std::sync::Arc;

pub use errors::{Error, Limits, MissingKey, Options};
pub use funcs::NOT_IMPLEMENTED;
pub use program::Functions;
pub use value::ExtFn;

use program::Program;

/// A parsed template (with its `define`d templates), reusable across executions and threads.
#[derive(Debug, Clone)]
pub struct Template {
    program: Program,
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
        Ok(Template {
            program: Program {
                name: name.to_string(),
                trees,
                funcs,
            },
        })
    }

    /// Executes the template on `data` (the `.` of the template).
    pub fn execute(&self, data: &serde_json::Value, options: &Options) -> Result<String, Error> {
        let v = exec::data_value(&self.program, data);
        exec::execute(&self.program, v, options)
    }

    /// The names of the templates defined by the text (its own name included), sorted.
    pub fn template_names(&self) -> Vec<&str> {
        self.program.trees.keys().map(String::as_str).collect()
    }
}
