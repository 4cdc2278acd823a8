//! Size and time limits that keep a hostile or broken repository from exhausting the machine.

use std::time::Duration;

use plumb_model::Settings;
use plumb_model::settings::{
    RECONCILIATION_TIMEOUT, RENDER_MEMORY_LIMIT, RENDER_TIMEOUT, REPOSITORY_MAX_DOWNLOAD_SIZE,
    REPOSITORY_REVISION_CACHE_EXPIRATION,
};

use crate::error::{Error, Result};

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
    /// Largest download from a Helm chart repository or an OCI registry: an `index.yaml`, a
    /// chart archive, an OCI layer (default 128 MiB; setting `plumb.repository.maxDownloadSize`).
    pub max_download_bytes: u64,
    /// Time allowed for one fetch or ref listing (default 120 s).
    pub fetch_timeout: Duration,
    /// How long a Helm repository's `index.yaml`, and what an OCI tag or constraint resolved to,
    /// are used before they are asked for again (default 3 minutes; setting
    /// `plumb.repository.revisionCacheExpiration`, else `timeout.reconciliation`, as Argo CD's
    /// repo-server `--revision-cache-expiration` defaults to it). A hard refresh asks at once.
    pub revision_cache_expiration: Duration,
    /// Time allowed for one render: a helm or kustomize run, or a Jsonnet evaluation (default 90 s;
    /// setting `plumb.render.timeout`). The render's process group is killed when it passes.
    pub render_timeout: Duration,
    /// Memory one render process may use (default 1 GiB; setting `plumb.render.memoryLimit`),
    /// enforced by the kernel (`RLIMIT_DATA`) in the render worker and the tools it starts.
    pub render_memory_bytes: u64,
    /// Deepest Jsonnet call stack, in frames (default 500, as go-jsonnet and so Argo CD).
    pub jsonnet_max_stack: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 16 << 20,
            max_repo_bytes: 1 << 30,
            max_repo_files: 200_000,
            max_render_bytes: 64 << 20,
            max_download_bytes: 128 << 20,
            fetch_timeout: Duration::from_secs(120),
            revision_cache_expiration: Duration::from_secs(180),
            render_timeout: Duration::from_secs(90),
            render_memory_bytes: 1 << 30,
            jsonnet_max_stack: 500,
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
    /// Sets [`Limits::max_download_bytes`].
    pub fn max_download_bytes(mut self, n: u64) -> Self {
        self.max_download_bytes = n;
        self
    }
    /// Sets [`Limits::fetch_timeout`].
    pub fn fetch_timeout(mut self, d: Duration) -> Self {
        self.fetch_timeout = d;
        self
    }
    /// Sets [`Limits::revision_cache_expiration`].
    pub fn revision_cache_expiration(mut self, d: Duration) -> Self {
        self.revision_cache_expiration = d;
        self
    }
    /// Sets [`Limits::render_timeout`].
    pub fn render_timeout(mut self, d: Duration) -> Self {
        self.render_timeout = d;
        self
    }
    /// Sets [`Limits::render_memory_bytes`].
    pub fn render_memory_bytes(mut self, n: u64) -> Self {
        self.render_memory_bytes = n;
        self
    }
    /// Sets [`Limits::jsonnet_max_stack`].
    pub fn jsonnet_max_stack(mut self, frames: usize) -> Self {
        self.jsonnet_max_stack = frames;
        self
    }

    /// These limits with the render limits the settings ConfigMap sets (`plumb.render.timeout`,
    /// `plumb.render.memoryLimit`) and the download limit (`plumb.repository.maxDownloadSize`);
    /// keys that are absent leave the limit as it is.
    ///
    /// ```
    /// use std::time::Duration;
    /// use plumb_model::Settings;
    /// let settings = Settings::from_data(
    ///     [("plumb.render.timeout".to_string(), "2m".to_string()),
    ///      ("plumb.render.memoryLimit".to_string(), "512Mi".to_string())].into(),
    /// );
    /// let limits = plumb_source::Limits::default().with_settings(&settings)?;
    /// assert_eq!(limits.render_timeout, Duration::from_secs(120));
    /// assert_eq!(limits.render_memory_bytes, 512 << 20);
    /// # Ok::<(), plumb_source::Error>(())
    /// ```
    pub fn with_settings(mut self, settings: &Settings) -> Result<Self> {
        if let Some(value) = settings.get(RENDER_TIMEOUT) {
            self.render_timeout = parse_duration(value).ok_or_else(|| Error::InvalidSetting {
                key: RENDER_TIMEOUT,
                value: value.to_owned(),
                expected: "a positive duration such as 90s, 2m or 1m30s",
            })?;
        }
        if let Some(value) = settings.get(RENDER_MEMORY_LIMIT) {
            self.render_memory_bytes = parse_quantity(value)
                .filter(|n| *n >= MIN_RENDER_MEMORY)
                .ok_or_else(|| Error::InvalidSetting {
                    key: RENDER_MEMORY_LIMIT,
                    value: value.to_owned(),
                    expected: "a quantity of bytes of at least 128Mi, such as 512Mi or 2Gi",
                })?;
        }
        if let Some(value) = settings.get(REPOSITORY_MAX_DOWNLOAD_SIZE) {
            self.max_download_bytes = parse_quantity(value)
                .filter(|n| *n >= MIN_DOWNLOAD)
                .ok_or_else(|| Error::InvalidSetting {
                    key: REPOSITORY_MAX_DOWNLOAD_SIZE,
                    value: value.to_owned(),
                    expected: "a quantity of bytes of at least 4Ki, such as 64Mi or 1Gi",
                })?;
        }
        if let Some(value) = settings.get(REPOSITORY_REVISION_CACHE_EXPIRATION) {
            self.revision_cache_expiration = plumb_model::duration::parse_duration(value)
                .ok_or_else(|| Error::InvalidSetting {
                    key: REPOSITORY_REVISION_CACHE_EXPIRATION,
                    value: value.to_owned(),
                    expected: "a duration such as 3m, 30s or 1h (0s: ask every time)",
                })?;
        } else if let Some(d) = settings
            .get(RECONCILIATION_TIMEOUT)
            .and_then(plumb_model::duration::parse_duration)
        {
            // Argo's stock manifests give the repo-server ARGOCD_RECONCILIATION_TIMEOUT from this
            // key, and --revision-cache-expiration defaults to it. A malformed value is the
            // controller's to report; here it leaves the expiration as it was.
            self.revision_cache_expiration = d;
        }
        Ok(self)
    }
}

/// Smaller than any real chart archive or index: a smaller setting is a mistake.
const MIN_DOWNLOAD: u64 = 4 << 10;

/// Below this the Go runtime of helm and kustomize cannot start (it needs about 96 MiB of data
/// segment before doing anything); a smaller setting is a mistake.
const MIN_RENDER_MEMORY: u64 = 128 << 20;

/// `90`, `90s`, `1m30s`, `500ms`, `1h`: Go's duration syntax without fractions, or plain seconds.
/// Zero is refused (a limit of zero would stop every render).
pub fn parse_duration(text: &str) -> Option<Duration> {
    plumb_model::duration::parse_duration(text).filter(|d| !d.is_zero())
}

/// A Kubernetes quantity of bytes: `1073741824`, `512Mi`, `2Gi`, `1G`, `500M`.
pub fn parse_quantity(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let n: u64 = text[..digits].parse().ok()?;
    let unit: u64 = match &text[digits..] {
        "" => 1,
        "k" | "K" => 1000,
        "M" => 1000_u64.pow(2),
        "G" => 1000_u64.pow(3),
        "T" => 1000_u64.pow(4),
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// A duration in whole milliseconds, saturating (for limits kept in atomics).
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `1 GiB`, `256 MiB`, `1000 bytes`: a byte count as people write it, for messages.
pub(crate) fn human_bytes(n: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_go_syntax() {
        assert_eq!(parse_duration("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 1m30s "), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        for bad in ["", "0", "0s", "-5s", "1.5s", "5 s", "5d", "s", "m5"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn quantities_follow_kubernetes_suffixes() {
        assert_eq!(parse_quantity("512Mi"), Some(512 << 20));
        assert_eq!(parse_quantity("2Gi"), Some(2 << 30));
        assert_eq!(parse_quantity("1G"), Some(1_000_000_000));
        assert_eq!(parse_quantity("1048576"), Some(1 << 20));
        for bad in ["", "1.5Gi", "Gi", "1GB", "-1Gi", "99999999999Ti"] {
            assert_eq!(parse_quantity(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn settings_override_only_what_they_name() {
        let s = |pairs: &[(&str, &str)]| {
            Settings::from_data(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        };
        let base = Limits::default().render_timeout(Duration::from_secs(7));
        let same = base.clone().with_settings(&s(&[])).unwrap();
        assert_eq!(same, base);
        let set = base
            .clone()
            .with_settings(&s(&[(RENDER_MEMORY_LIMIT, "256Mi")]))
            .unwrap();
        assert_eq!(set.render_memory_bytes, 256 << 20);
        assert_eq!(set.render_timeout, Duration::from_secs(7));
        let err = base
            .clone()
            .with_settings(&s(&[(RENDER_MEMORY_LIMIT, "1Mi")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "setting plumb.render.memoryLimit: \"1Mi\" is not a quantity of bytes of at least 128Mi, such as 512Mi or 2Gi"
        );
        let set = base
            .clone()
            .with_settings(&s(&[(REPOSITORY_MAX_DOWNLOAD_SIZE, "64Mi")]))
            .unwrap();
        assert_eq!(set.max_download_bytes, 64 << 20);
        assert_eq!(set.render_timeout, Duration::from_secs(7));
        let err = base
            .clone()
            .with_settings(&s(&[(REPOSITORY_MAX_DOWNLOAD_SIZE, "12")]))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("setting plumb.repository.maxDownloadSize: \"12\""),
            "{err}"
        );
        let set = base
            .clone()
            .with_settings(&s(&[(RECONCILIATION_TIMEOUT, "45s")]))
            .unwrap();
        assert_eq!(set.revision_cache_expiration, Duration::from_secs(45));
        let set = base
            .clone()
            .with_settings(&s(&[
                (RECONCILIATION_TIMEOUT, "45s"),
                (REPOSITORY_REVISION_CACHE_EXPIRATION, "0s"),
            ]))
            .unwrap();
        assert_eq!(set.revision_cache_expiration, Duration::ZERO);
        let set = base
            .clone()
            .with_settings(&s(&[(RECONCILIATION_TIMEOUT, "soon")]))
            .unwrap();
        assert_eq!(
            set.revision_cache_expiration,
            base.revision_cache_expiration
        );
        let err = base
            .clone()
            .with_settings(&s(&[(REPOSITORY_REVISION_CACHE_EXPIRATION, "a while")]))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("setting plumb.repository.revisionCacheExpiration: \"a while\""),
            "{err}"
        );
        let err = base
            .with_settings(&s(&[(RENDER_TIMEOUT, "forever")]))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("setting plumb.render.timeout: \"forever\""),
            "{err}"
        );
    }

    #[test]
    fn byte_counts_read_as_people_write_them() {
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes(256 << 20), "256 MiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
    }
}
