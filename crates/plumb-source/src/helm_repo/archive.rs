//! Unpacking a chart archive (`.tgz`) with the limits and trust rules of a Git tree.
//!
//! A chart archive holds one top directory (the chart's name) with regular files and
//! directories. Anything else is refused before it reaches the disk: symbolic and hard links,
//! devices and FIFOs, absolute paths, `..`, entries outside the one top directory. The
//! decompressed stream, every file, the total size and the number of entries are bounded by the
//! repository limits ([`Limits`]), so a gzip bomb stops with a clear error. Plumb writes every
//! file itself (the `tar` crate only parses), so nothing is ever followed on the way in.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::limits::{Limits, human_bytes};

/// Headers, long names and padding may add this much to the files' own bytes.
const STREAM_SLACK: u64 = 16 << 20;

/// How an archive's entries map onto the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A Helm chart: one top directory, dropped; `Chart.yaml` must be in it.
    Chart,
    /// A tree of files kept as they are (an OCI artifact holding manifests).
    Tree,
}

/// Unpacks `archive` (gzip-compressed tar) into `dest` (created), dropping the top directory,
/// and returns that directory's name. `what` names the chart in errors (`api 1.2.3 from URL`).
pub(crate) fn unpack(archive: &[u8], dest: &Path, limits: &Limits, what: &str) -> Result<String> {
    unpack_with(archive, true, Layout::Chart, dest, limits, what)
}

/// Unpacks `archive` (a tar, gzip-compressed when `gzip`) into `dest` with `layout`, with the
/// same refusals and limits as [`unpack`]. Returns the top directory's name (empty for
/// [`Layout::Tree`]).
pub(crate) fn unpack_with(
    archive: &[u8],
    gzip: bool,
    layout: Layout,
    dest: &Path,
    limits: &Limits,
    what: &str,
) -> Result<String> {
    let mut u = Unpacking {
        layout,
        dest,
        limits,
        what,
        stream_limit: limits.max_repo_bytes.saturating_add(STREAM_SLACK),
        top: None,
        entries_seen: 0,
        total: 0,
    };
    let inner: Box<dyn Read + '_> = if gzip {
        Box::new(flate2::read::GzDecoder::new(archive))
    } else {
        Box::new(archive)
    };
    let reader = Bounded {
        inner,
        left: u.stream_limit,
    };
    let mut tar = tar::Archive::new(reader);
    std::fs::create_dir_all(dest).map_err(Error::io("creating", dest))?;
    for entry in tar.entries().map_err(|e| u.read_err(e))? {
        let mut entry = entry.map_err(|e| u.read_err(e))?;
        let raw = entry.path().map_err(|e| u.read_err(e))?.into_owned();
        let shown = raw.display().to_string();
        let parts = u.parts(&raw, &shown)?;
        if parts.is_empty() {
            continue;
        }
        let rel = u.place(&parts, &shown)?;
        u.write(&mut entry, &rel, &shown)?;
    }
    u.finish()
}

/// One archive being unpacked: where to, under which limits, and what was seen so far.
struct Unpacking<'a> {
    layout: Layout,
    dest: &'a Path,
    limits: &'a Limits,
    /// The chart, in errors.
    what: &'a str,
    /// Bytes the decompressed stream may hold.
    stream_limit: u64,
    /// The top directory (empty for [`Layout::Tree`]), once an entry was seen.
    top: Option<String>,
    entries_seen: u64,
    /// Bytes of the files written.
    total: u64,
}

impl Unpacking<'_> {
    fn refuse(&self, detail: String) -> Error {
        Error::ChartArchive {
            chart: self.what.to_owned(),
            detail,
        }
    }

    fn too_large(&self, what_grew: &'static str, limit: u64) -> Error {
        Error::TooLarge {
            what: what_grew,
            limit: human_bytes(limit),
            context: self.what.to_owned(),
        }
    }

    fn read_err(&self, e: io::Error) -> Error {
        if e.kind() == io::ErrorKind::FileTooLarge {
            self.too_large("decompressed chart archive", self.stream_limit)
        } else {
            self.refuse(format!("not a readable .tgz: {e}"))
        }
    }

    /// The entry's path as plain names; absolute paths and `..` refused.
    fn parts(&self, raw: &Path, shown: &str) -> Result<Vec<std::ffi::OsString>> {
        let mut parts = Vec::new();
        for c in raw.components() {
            match c {
                Component::Normal(p) => parts.push(p.to_owned()),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => {
                    return Err(self.refuse(format!("entry {shown} is an absolute path")));
                }
                Component::ParentDir => {
                    return Err(self.refuse(format!("entry {shown} climbs out with ..")));
                }
            }
        }
        Ok(parts)
    }

    /// Where the entry goes beneath the destination (for a chart: the top directory dropped, and
    /// an entry outside it refused); counts it against the entry limit.
    fn place(&mut self, parts: &[std::ffi::OsString], shown: &str) -> Result<PathBuf> {
        let rest: &[std::ffi::OsString] = if self.layout == Layout::Tree {
            self.top.get_or_insert_with(String::new);
            parts
        } else {
            let (first, rest) = parts.split_at(1);
            let first = first[0].to_string_lossy().into_owned();
            match &self.top {
                None => self.top = Some(first.clone()),
                Some(t) if *t != first => {
                    return Err(
                        self.refuse(format!("entry {shown} is outside the chart directory {t}/"))
                    );
                }
                Some(_) => {}
            }
            rest
        };
        self.entries_seen += 1;
        if self.entries_seen > self.limits.max_repo_files {
            return Err(Error::TooLarge {
                what: "chart archive entries",
                limit: self.limits.max_repo_files.to_string(),
                context: self.what.to_owned(),
            });
        }
        Ok(rest.iter().collect())
    }

    /// Creates a directory entry, or writes a regular file entry (links and anything else
    /// refused) within the file and total size limits; a name written twice is refused.
    fn write<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        rel: &Path,
        shown: &str,
    ) -> Result<()> {
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            let p = self.dest.join(rel);
            std::fs::create_dir_all(&p).map_err(Error::io("creating", p))?;
            return Ok(());
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            let kind_name = if kind.is_symlink() {
                "a symbolic link"
            } else if kind.is_hard_link() {
                "a hard link"
            } else {
                "neither a file nor a directory"
            };
            return Err(self.refuse(format!("entry {shown} is {kind_name}")));
        }
        if rel.as_os_str().is_empty() {
            return Err(self.refuse(format!(
                "entry {shown} is a file in place of the chart directory"
            )));
        }
        let data = self.read_file(entry)?;
        self.total += data.len() as u64;
        if self.total > self.limits.max_repo_bytes {
            return Err(self.too_large("unpacked chart", self.limits.max_repo_bytes));
        }
        let p = self.dest.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(Error::io("creating", parent))?;
        }
        // `create_new`: a second entry of the same name is refused rather than overwriting.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .map_err(|e| self.refuse(format!("entry {shown} cannot be written: {e}")))?;
        io::Write::write_all(&mut file, &data).map_err(Error::io("writing", &p))
    }

    /// A file entry's bytes, at most `max_file_bytes` (declared and read).
    fn read_file<R: Read>(&self, entry: &mut tar::Entry<'_, R>) -> Result<Vec<u8>> {
        let max = self.limits.max_file_bytes;
        let declared = entry.header().size().map_err(|e| self.read_err(e))?;
        if declared > max {
            return Err(self.too_large("file", max));
        }
        let mut data = Vec::with_capacity(declared as usize);
        entry
            .take(max.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| self.read_err(e))?;
        if data.len() as u64 > max {
            return Err(self.too_large("file", max));
        }
        Ok(data)
    }

    /// The top directory's name, once the archive held anything; a chart must have its
    /// `Chart.yaml`.
    fn finish(self) -> Result<String> {
        let top = self
            .top
            .clone()
            .ok_or_else(|| self.refuse("the archive is empty".into()))?;
        if self.layout == Layout::Chart && !self.dest.join("Chart.yaml").is_file() {
            return Err(self.refuse(format!("{top}/Chart.yaml is missing")));
        }
        Ok(top)
    }
}

/// A reader that fails with `FileTooLarge` once more than `left` bytes were read.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One probe byte tells a stream that ends exactly at the limit from a longer one.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    "decompressed archive too large",
                )),
            };
        }
        let cap = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..cap])?;
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tgz(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        let raw = b.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut gz, &raw).unwrap();
        gz.finish().unwrap()
    }

    fn file(b: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8]) {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, path, data).unwrap();
    }

    /// Writes a raw header whose name the builder would refuse (`..`, absolute).
    fn raw_entry(b: &mut tar::Builder<Vec<u8>>, name: &str, kind: tar::EntryType, link: &str) {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_size(0);
        h.set_mode(0o644);
        h.set_entry_type(kind);
        h.set_cksum();
        b.append(&h, io::empty()).unwrap();
    }

    fn run(archive: &[u8], limits: &Limits) -> (tempfile::TempDir, Result<String>) {
        let dir = tempfile::tempdir().unwrap();
        let r = unpack(archive, &dir.path().join("out"), limits, "api 1.0.0");
        (dir, r)
    }

    #[test]
    fn a_chart_unpacks_without_its_top_directory() {
        let a = tgz(|b| {
            file(b, "api/Chart.yaml", b"name: api\nversion: 1.0.0\n");
            file(b, "api/templates/cm.yaml", b"kind: ConfigMap\n");
        });
        let (dir, r) = run(&a, &Limits::default());
        assert_eq!(r.unwrap(), "api");
        let out = dir.path().join("out");
        assert!(out.join("Chart.yaml").is_file());
        assert!(out.join("templates/cm.yaml").is_file());
    }

    #[test]
    fn escapes_links_and_strays_are_refused() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                tgz(|b| raw_entry(b, "api/../../etc/x", tar::EntryType::Regular, "")),
                "climbs out",
            ),
            (
                tgz(|b| raw_entry(b, "/etc/cron.d/x", tar::EntryType::Regular, "")),
                "absolute path",
            ),
            (
                tgz(|b| {
                    file(b, "api/Chart.yaml", b"name: api\n");
                    raw_entry(b, "api/values.yaml", tar::EntryType::Symlink, "/etc/passwd");
                }),
                "symbolic link",
            ),
            (
                tgz(|b| {
                    file(b, "api/Chart.yaml", b"name: api\n");
                    raw_entry(b, "api/x", tar::EntryType::Link, "api/Chart.yaml");
                }),
                "hard link",
            ),
            (
                tgz(|b| {
                    file(b, "api/Chart.yaml", b"name: api\n");
                    file(b, "other/evil.yaml", b"x");
                }),
                "outside the chart directory",
            ),
            (
                tgz(|b| {
                    file(b, "api/Chart.yaml", b"name: api\n");
                    raw_entry(b, "api/dev", tar::EntryType::Char, "");
                }),
                "neither a file nor a directory",
            ),
            (
                tgz(|b| {
                    file(b, "api/Chart.yaml", b"a");
                    file(b, "api/Chart.yaml", b"b");
                }),
                "cannot be written",
            ),
            (
                tgz(|b| file(b, "api/values.yaml", b"a: 1\n")),
                "Chart.yaml is missing",
            ),
            (b"not gzip at all".to_vec(), "not a readable .tgz"),
        ];
        for (archive, want) in cases {
            let (dir, r) = run(&archive, &Limits::default());
            let err = r.unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
            assert!(err.contains("api 1.0.0"), "{err}");
            assert!(!dir.path().join("etc").exists());
        }
    }

    #[test]
    fn sizes_and_counts_are_bounded() {
        let big = tgz(|b| {
            file(b, "api/Chart.yaml", b"name: api\n");
            file(b, "api/big.yaml", &vec![b'a'; 4096]);
        });
        let (_d, r) = run(&big, &Limits::default().max_file_bytes(1024));
        assert!(
            matches!(r, Err(Error::TooLarge { what: "file", .. })),
            "{r:?}"
        );
        let (_d, r) = run(&big, &Limits::default().max_repo_bytes(2048));
        assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
        let many = tgz(|b| {
            for i in 0..50 {
                file(b, &format!("api/f{i}.yaml"), b"x");
            }
        });
        let (_d, r) = run(&many, &Limits::default().max_repo_files(10));
        assert!(
            matches!(
                r,
                Err(Error::TooLarge {
                    what: "chart archive entries",
                    ..
                })
            ),
            "{r:?}"
        );
    }
}
