//! The module trees of one crate: which modules exist (files and inline `mod x { }`), what each
//! declares, imports and names. Test-only modules are left out; their files are only marked.

use std::collections::{BTreeMap, BTreeSet};

use syn::{Item, ItemMod};

use crate::attrs::{is_test_only, item_attrs, path_attr};
use crate::error::Error;
use crate::paths::{PathRef, item_paths, use_leaves};

/// A module of non-test code.
#[derive(Debug, Default)]
pub(crate) struct Module {
    /// `src/a/mod.rs`, or `src/a.rs::inner` for an inline module.
    pub(crate) name: String,
    /// The file its items are written in.
    pub(crate) file: String,
    pub(crate) parent: Option<usize>,
    /// The crate root of its tree (`lib.rs`, `main.rs`, `bin/*.rs`).
    pub(crate) root: usize,
    pub(crate) children: BTreeMap<String, usize>,
    pub(crate) items: BTreeSet<String>,
    /// Names bound by `use`, with the path they stand for.
    pub(crate) imports: BTreeMap<String, Vec<String>>,
    pub(crate) globs: Vec<Vec<String>>,
    /// Every path its non-test code names, in source order.
    pub(crate) refs: Vec<PathRef>,
}

/// All module trees of a crate, and the files that hold them.
#[derive(Default)]
pub(crate) struct Tree {
    pub(crate) modules: Vec<Module>,
    /// Non-test files, parsed, each once.
    pub(crate) files: BTreeMap<String, syn::File>,
    /// Files loaded only by test-only modules.
    pub(crate) test_files: BTreeSet<String>,
}

/// Builds the trees of a crate whose files are `sources` (keys like `src/lib.rs`).
pub(crate) fn build(sources: &BTreeMap<String, String>, roots: &[String]) -> Result<Tree, Error> {
    let mut builder = Builder {
        sources,
        tree: Tree::default(),
    };
    for root in roots {
        builder.add_root(root)?;
    }
    Ok(builder.tree)
}

struct Builder<'a> {
    sources: &'a BTreeMap<String, String>,
    tree: Tree,
}

impl Builder<'_> {
    fn add_root(&mut self, key: &str) -> Result<(), Error> {
        let ast = self.parse(key)?;
        let id = self.tree.modules.len();
        self.tree.modules.push(Module {
            name: key.to_owned(),
            file: key.to_owned(),
            root: id,
            ..Module::default()
        });
        self.collect(id, &ast.items, parent_dir(key))?;
        self.tree.files.entry(key.to_owned()).or_insert(ast);
        Ok(())
    }

    fn parse(&self, key: &str) -> Result<syn::File, Error> {
        let text = self.sources.get(key).ok_or_else(|| Error::MissingModule {
            file: key.to_owned(),
            module: key.to_owned(),
            candidates: key.to_owned(),
        })?;
        syn::parse_file(text).map_err(|source| Error::Parse {
            file: key.to_owned(),
            line: source.span().start().line,
            source,
        })
    }

    /// Reads the items of `module`; `dir` is where its `mod x;` files live.
    fn collect(&mut self, module: usize, items: &[Item], dir: &str) -> Result<(), Error> {
        for item in items {
            if is_test_only(item_attrs(item)) {
                if let Item::Mod(m) = item {
                    let declaring = self.tree.modules[module].file.clone();
                    self.mark_test(&declaring, m, dir)?;
                }
                continue;
            }
            match item {
                Item::Mod(m) => self.add_mod(module, m, dir)?,
                Item::Use(u) => self.add_use(module, u),
                _ => {
                    let m = &mut self.tree.modules[module];
                    if let Some(name) = item_name(item) {
                        m.items.insert(name);
                    }
                    m.refs.extend(item_paths(item));
                }
            }
        }
        Ok(())
    }

    fn add_use(&mut self, module: usize, item: &syn::ItemUse) {
        let m = &mut self.tree.modules[module];
        for leaf in use_leaves(item) {
            if leaf.path.glob {
                m.globs.push(leaf.path.segments.clone());
            } else if let Some(name) = &leaf.name
                && leaf.path.segments != [name.clone()]
            {
                m.imports.insert(name.clone(), leaf.path.segments.clone());
            }
            m.refs.push(leaf.path);
        }
    }

    fn add_mod(&mut self, parent: usize, m: &ItemMod, dir: &str) -> Result<(), Error> {
        let name = m.ident.to_string();
        let id = self.tree.modules.len();
        let root = self.tree.modules[parent].root;
        let (module_name, file, inline_items) = match &m.content {
            Some((_, items)) => {
                let parent_name = &self.tree.modules[parent].name;
                (
                    format!("{parent_name}::{name}"),
                    self.tree.modules[parent].file.clone(),
                    Some(items),
                )
            }
            None => {
                let key = self.mod_file(&self.tree.modules[parent].file, m, dir)?;
                (key.clone(), key, None)
            }
        };
        self.tree.modules.push(Module {
            name: module_name,
            file: file.clone(),
            parent: Some(parent),
            root,
            ..Module::default()
        });
        self.tree.modules[parent].children.insert(name.clone(), id);
        match inline_items {
            Some(items) => self.collect(id, items, &format!("{dir}/{name}")),
            None => {
                let ast = self.parse(&file)?;
                self.collect(id, &ast.items, &child_dir(&file))?;
                self.tree.files.entry(file).or_insert(ast);
                Ok(())
            }
        }
    }

    /// The file of `mod x;`: `#[path]`, else `dir/x.rs` or `dir/x/mod.rs`.
    fn mod_file(&self, declaring: &str, m: &ItemMod, dir: &str) -> Result<String, Error> {
        let name = m.ident.to_string();
        let candidates = match path_attr(&m.attrs) {
            Some(path) => vec![normalize(&format!("{}/{path}", parent_dir(declaring)))],
            None => vec![format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")],
        };
        candidates
            .iter()
            .find(|c| self.sources.contains_key(c.as_str()))
            .cloned()
            .ok_or_else(|| Error::MissingModule {
                file: declaring.to_owned(),
                module: name,
                candidates: candidates.join(" or "),
            })
    }

    /// Marks the files of a test-only module, and of the modules it declares, as test files.
    fn mark_test(&mut self, declaring: &str, m: &ItemMod, dir: &str) -> Result<(), Error> {
        let name = m.ident.to_string();
        let (items, file, dir) = match &m.content {
            Some((_, items)) => (items.clone(), declaring.to_owned(), format!("{dir}/{name}")),
            None => {
                let key = self.mod_file(declaring, m, dir)?;
                let ast = self.parse(&key)?;
                self.tree.test_files.insert(key.clone());
                let dir = child_dir(&key);
                (ast.items, key, dir)
            }
        };
        for item in &items {
            if let Item::Mod(child) = item {
                self.mark_test(&file, child, &dir)?;
            }
        }
        Ok(())
    }
}

/// The name an item defines in its module (impls and `use` define none here).
fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Macro(i) => i.ident.as_ref()?,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

fn parent_dir(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Where the `mod x;` files of the file `key` live: beside a `mod.rs`, in `a/` for `a.rs`.
fn child_dir(key: &str) -> String {
    match key.strip_suffix("/mod.rs") {
        Some(dir) => dir.to_owned(),
        None => key.strip_suffix(".rs").unwrap_or(key).to_owned(),
    }
}

fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}
