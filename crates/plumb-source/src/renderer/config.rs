//! How a [`Renderer`](super::Renderer) is set up: where it caches, its limits and tools.

use std::path::PathBuf;
use std::time::Duration;

use crate::limits::Limits;
use crate::render::Tools;

/// How the [`Renderer`](super::Renderer) is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Root of the Git cache, the commit trees and the manifest cache.
    pub cache_dir: PathBuf,
    /// Size and time limits.
    pub limits: Limits,
    /// The helm and kustomize binaries.
    pub tools: Tools,
    /// Memory the in-memory manifest cache may hold (default 64 MiB of manifests as compact
    /// JSON, which is how they are kept).
    pub memory_cache_bytes: usize,
    /// Keep rendered manifests on disk too (default true), so a restart renders nothing again.
    pub disk_cache: bool,
    /// Bytes the manifest files on disk may take (default 1 GiB); past it the least recently
    /// used are removed.
    pub disk_cache_bytes: u64,
    /// How long a repository's ref listing (`ls-remote`) is shared by every source on it
    /// (default 0: only a listing in flight is joined; the controller uses a few seconds).
    pub ref_cache_ttl: Duration,
    /// The directory of config management plugin files (`ConfigManagementPlugin` YAML); `None`:
    /// no plugins (a source that asks for one fails, and no discovery runs).
    pub plugins_dir: Option<PathBuf>,
}

impl Config {
    /// Defaults, with everything cached under `cache_dir`.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            cache_dir: cache_dir.into(),
            limits: Limits::default(),
            tools: Tools::default(),
            memory_cache_bytes: 64 << 20,
            disk_cache: true,
            disk_cache_bytes: 1 << 30,
            ref_cache_ttl: Duration::ZERO,
            plugins_dir: None,
        }
    }
    /// Sets the directory config management plugins are read from.
    pub fn plugins_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.plugins_dir = dir;
        self
    }
    /// Sets the limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    /// Sets the tool paths.
    pub fn tools(mut self, tools: Tools) -> Self {
        self.tools = tools;
        self
    }
    /// Sets the memory bound of the manifest cache.
    pub fn memory_cache_bytes(mut self, n: usize) -> Self {
        self.memory_cache_bytes = n;
        self
    }
    /// Sets how long a ref listing is shared by the sources of one repository.
    pub fn ref_cache_ttl(mut self, ttl: Duration) -> Self {
        self.ref_cache_ttl = ttl;
        self
    }
    /// Sets the size bound of the on-disk manifest cache.
    pub fn disk_cache_bytes(mut self, n: u64) -> Self {
        self.disk_cache_bytes = n;
        self
    }
    /// Turns the on-disk manifest cache on or off.
    pub fn disk_cache(mut self, on: bool) -> Self {
        self.disk_cache = on;
        self
    }
}
