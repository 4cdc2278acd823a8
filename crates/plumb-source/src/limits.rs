//! Size and time limits that keep a hostile or broken repository from exhausting the machine.

use std::time::Duration;

/// Limits applied while fetching, expanding and rendering a source.
///
/// ```
/// use std::time::Duration;
/// let limits = plumb_source::Limits::default().render_timeout(Duration::from_secs(30));
/// assert_eq!(limits.render_timeout, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest single file in a repository tree (default 16 MiB).
    pub max_file_bytes: u64,
    /// Largest expanded repository tree (default 1 GiB).
    pub max_repo_bytes: u64,
    /// Most entries (files, directories, links) in a repository tree (default 200,000).
    pub max_repo_files: u64,
    /// Largest rendered output of one source: tool stdout, or the sum of a directory's manifest
    /// files (default 64 MiB).
    pub max_render_bytes: u64,
    /// Time allowed for one fetch or ref listing (default 120 s).
    pub fetch_timeout: Duration,
    /// Time allowed for one render: a helm or kustomize run, or a Jsonnet evaluation (default 90 s).
    pub render_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 16 << 20,
            max_repo_bytes: 1 << 30,
            max_repo_files: 200_000,
            max_render_bytes: 64 << 20,
            fetch_timeout: Duration::from_secs(120),
            render_timeout: Duration::from_secs(90),
        }
    }
}

impl Limits {
    /// Sets [`Limits::max_file_bytes`].
    pub fn max_file_bytes(mut self, n: u64) -> Self {
        self.max_file_bytes = n;
        self
    }
    /// Sets [`Limits::max_repo_bytes`].
    pub fn max_repo_bytes(mut self, n: u64) -> Self {
        self.max_repo_bytes = n;
        self
    }
    /// Sets [`Limits::max_repo_files`].
    pub fn max_repo_files(mut self, n: u64) -> Self {
        self.max_repo_files = n;
        self
    }
    /// Sets [`Limits::max_render_bytes`].
    pub fn max_render_bytes(mut self, n: u64) -> Self {
        self.max_render_bytes = n;
        self
    }
    /// Sets [`Limits::fetch_timeout`].
    pub fn fetch_timeout(mut self, d: Duration) -> Self {
        self.fetch_timeout = d;
        self
    }
    /// Sets [`Limits::render_timeout`].
    pub fn render_timeout(mut self, d: Duration) -> Self {
        self.render_timeout = d;
        self
    }
}
