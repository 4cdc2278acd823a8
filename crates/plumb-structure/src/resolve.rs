//! Which module defines the item a path names, following `use` re-exports to their origin.

use crate::tree::Tree;

/// What a path names inside the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A module itself (`crate::a::b`).
    Module(usize),
    /// An item defined in this module (a type, function, const, ... or something inside one).
    Item(usize),
}

/// Re-export chains longer than this are taken as unresolvable (and so are import loops).
const MAX_DEPTH: usize = 16;

/// Resolves `segments`, written in module `from`; `None` for other crates, std, locals.
pub(crate) fn resolve(tree: &Tree, from: usize, segments: &[String]) -> Option<Target> {
    resolve_at(tree, from, segments, 0)
}

fn resolve_at(tree: &Tree, from: usize, segments: &[String], depth: usize) -> Option<Target> {
    if depth > MAX_DEPTH {
        return None;
    }
    let (first, rest) = segments.split_first()?;
    match first.as_str() {
        "crate" => walk(tree, tree.modules[from].root, rest, depth),
        "self" => walk(tree, from, rest, depth),
        "super" => walk(tree, tree.modules[from].parent?, rest, depth),
        _ => lookup(tree, from, first, rest, depth),
    }
}

/// Follows `rest` down from module `at`.
fn walk(tree: &Tree, at: usize, rest: &[String], depth: usize) -> Option<Target> {
    let Some((first, tail)) = rest.split_first() else {
        return Some(Target::Module(at));
    };
    match first.as_str() {
        "super" => walk(tree, tree.modules[at].parent?, tail, depth),
        "self" => walk(tree, at, tail, depth),
        _ => lookup(tree, at, first, tail, depth),
    }
}

/// Finds `name` in the scope of module `at`: a child module, an item, an import, a glob import.
fn lookup(tree: &Tree, at: usize, name: &str, rest: &[String], depth: usize) -> Option<Target> {
    let module = &tree.modules[at];
    if let Some(&child) = module.children.get(name) {
        return walk(tree, child, rest, depth);
    }
    if module.items.contains(name) {
        return Some(Target::Item(at));
    }
    if let Some(path) = module.imports.get(name) {
        let full: Vec<String> = path.iter().chain(rest).cloned().collect();
        return resolve_at(tree, at, &full, depth + 1);
    }
    module
        .globs
        .iter()
        .find_map(|glob| match resolve_at(tree, at, glob, depth + 1)? {
            Target::Module(source) if source != at => lookup(tree, source, name, rest, depth + 1),
            _ => None,
        })
}
