//! Embeds the web UI bundle (`ui/dist`, built by `scripts/ui-build`) into the server: one
//! `include_bytes!` per file, listed in `$OUT_DIR/ui_assets.rs`. Without a bundle the list is
//! empty and the server answers every page with instructions to build it (never a blank page).
//! No embedding crate is needed for this, and `include_bytes!` makes Cargo rebuild when a file
//! of the bundle changes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(&path, base, out);
        } else if kind.is_file() {
            let Ok(rel) = path.strip_prefix(base) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            // Build bookkeeping, not part of the bundle.
            if rel.starts_with('.') {
                continue;
            }
            out.push((rel, path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = manifest.join("../../ui/dist");
    // ui/dist is in the repository (holding only its .gitignore until a bundle is built), so this
    // watch always points at an existing directory: Cargo rescans it on every build.
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    collect(&dist, &dist, &mut files);
    files.sort();
    let has_index = files.iter().any(|(rel, _)| rel == "index.html");
    if !has_index {
        println!(
            "cargo:warning=the web UI bundle ui/dist is not built: plumb server will serve a page saying how to build it (scripts/ui-build)"
        );
        files.clear();
    }
    let mut code = String::from(
        "/// The web UI bundle: (path under ui/dist, contents).\npub(crate) static ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in &files {
        let abs = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("ui_assets.rs");
    if let Err(e) = std::fs::write(&out, code) {
        panic!("writing {}: {e}", out.display());
    }
}
