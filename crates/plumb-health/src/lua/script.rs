//! A health or action script: its text, its libraries and where it came from.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One health script, compiled at most once per thread (keyed by a hash of its text).
#[derive(Clone)]
pub struct LuaScript {
    pub(super) source: Arc<str>,
    pub(super) hash: u64,
    open_libs: bool,
    origin: Arc<str>,
}

impl LuaScript {
    /// A script from its text. `open_libs` gives it every standard library (Argo's
    /// `useOpenLibs`) instead of base, table, string, math and a safe `os`. `origin` says where the
    /// text came from (a settings key or a file) for logs and the CLI.
    pub fn new(source: impl Into<Arc<str>>, open_libs: bool, origin: impl Into<Arc<str>>) -> Self {
        let source = source.into();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        source.hash(&mut hasher);
        Self {
            hash: hasher.finish(),
            source,
            open_libs,
            origin: origin.into(),
        }
    }

    /// The script text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the script runs with every standard library.
    pub fn open_libs(&self) -> bool {
        self.open_libs
    }

    /// Where the script came from (`argocd-cm resource.customizations.health.apps_Deployment`,
    /// or a file path).
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl fmt::Debug for LuaScript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LuaScript")
            .field("origin", &self.origin)
            .field("open_libs", &self.open_libs)
            .field("bytes", &self.source.len())
            .finish()
    }
}
