/// The result of checking every crate of a workspace.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub crates: Vec<CrateReport>,
}

/// One crate: its non-test size, its functions and its import circles. Paths are relative to the
/// workspace root (`crates/<dir>/src/...`).
#[derive(Debug, Clone, Default)]
pub struct CrateReport {
    pub name: String,
    /// Lines of non-test code: files reached from a crate root, minus `#[cfg(test)]` items.
    pub lines: usize,
    pub functions: Vec<FunctionLen>,
    pub circles: Vec<Circle>,
    /// Source files under `src/` that no module tree loads.
    pub unreached: Vec<String>,
}

/// A function of non-test code and its length, from the line of its signature to its closing brace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionLen {
    pub file: String,
    /// Line of the signature (1-based).
    pub line: usize,
    /// `name`, `Type::name` for methods, `outer::name` for nested functions.
    pub name: String,
    pub length: usize,
    /// The reason of a `// length: <reason>` comment above the function, if any.
    pub reason: Option<String>,
}

/// Modules that depend on each other in a circle (a strongly connected component).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    pub modules: Vec<String>,
    /// Every dependency between two members, with the first path that made it.
    pub edges: Vec<EdgeCause>,
}

/// A dependency of module `from` on module `to`, and the path that caused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeCause {
    pub from: String,
    pub to: String,
    pub file: String,
    pub line: usize,
    pub path: String,
}

impl Analysis {
    /// Functions over `max_lines` without a `// length:` reason, longest first.
    pub fn violations(&self, max_lines: usize) -> Vec<&FunctionLen> {
        let mut over: Vec<&FunctionLen> = self
            .crates
            .iter()
            .flat_map(|c| &c.functions)
            .filter(|f| f.length > max_lines && f.reason.is_none())
            .collect();
        over.sort_by(|a, b| {
            (b.length, &a.file, a.line, &a.name).cmp(&(a.length, &b.file, b.line, &b.name))
        });
        over
    }

    /// Every import circle of every crate.
    pub fn circles(&self) -> impl Iterator<Item = &Circle> {
        self.crates.iter().flat_map(|c| &c.circles)
    }

    /// Whether the tree breaks a rule: a circle, or an unexplained function over `max_lines`.
    pub fn fails(&self, max_lines: usize) -> bool {
        self.circles().next().is_some() || !self.violations(max_lines).is_empty()
    }
}

impl CrateReport {
    /// Number of functions longer than `lines`.
    pub fn over(&self, lines: usize) -> usize {
        self.functions.iter().filter(|f| f.length > lines).count()
    }
}
