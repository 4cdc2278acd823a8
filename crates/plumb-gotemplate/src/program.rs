//! What execution needs of a parsed template: its trees and its function registry.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::funcs;
use crate::parse::Tree;
use crate::value::ExtFn;

/// Extra functions for templates, beside the default set.
#[derive(Clone, Default)]
pub struct Functions {
    pub(crate) ext: BTreeMap<String, ExtFn>,
    pub(crate) data: BTreeMap<String, BTreeMap<String, ExtFn>>,
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
        self.data
            .entry(namespace.to_string())
            .or_default()
            .insert(name.to_string(), Arc::new(f));
        self
    }
}

impl std::fmt::Debug for Functions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Functions")
            .field("ext", &self.ext.keys().collect::<Vec<_>>())
            .field(
                "data",
                &self
                    .data
                    .iter()
                    .map(|(k, v)| (k, v.keys().collect::<Vec<_>>()))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The parsed trees of one template text and the functions it was parsed with.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub name: String,
    pub trees: BTreeMap<String, Tree>,
    pub funcs: Arc<Functions>,
}

impl Program {
    pub(crate) fn has_function(&self, name: &str) -> bool {
        self.funcs.ext.contains_key(name) || funcs::is_defined(name)
    }
}
