//! The paths a piece of code names: `use` trees, paths of the syntax tree, and path-like token
//! sequences inside macro bodies (which syn leaves unparsed).

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{ItemUse, UseTree};

use crate::attrs::{is_test_only, item_attrs};

/// A path as written, with the line of its first segment.
#[derive(Debug, Clone)]
pub(crate) struct PathRef {
    pub(crate) segments: Vec<String>,
    pub(crate) line: usize,
    /// A glob import (`use a::b::*`): the path names the module whose items are imported.
    pub(crate) glob: bool,
}

impl PathRef {
    pub(crate) fn text(&self) -> String {
        let joined = self.segments.join("::");
        if self.glob {
            format!("{joined}::*")
        } else {
            joined
        }
    }
}

/// One leaf of a `use` tree: the full path, and the name it binds (none for `_` and globs).
#[derive(Debug, Clone)]
pub(crate) struct UseLeaf {
    pub(crate) path: PathRef,
    pub(crate) name: Option<String>,
}

/// The leaves of a `use` declaration; `use ::x` (an external crate) has none.
pub(crate) fn use_leaves(item: &ItemUse) -> Vec<UseLeaf> {
    let mut out = Vec::new();
    if item.leading_colon.is_none() {
        flatten(&item.tree, &mut Vec::new(), &mut out);
    }
    out
}

fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    let leaf = |segments: Vec<String>, line, glob, name| UseLeaf {
        path: PathRef {
            segments,
            line,
            glob,
        },
        name,
    };
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let (segments, name) = joined(prefix, &n.ident.to_string());
            out.push(leaf(segments, line_of(&n.ident), false, name));
        }
        UseTree::Rename(r) => {
            let (segments, _) = joined(prefix, &r.ident.to_string());
            let rename = r.rename.to_string();
            let name = (rename != "_").then_some(rename);
            out.push(leaf(segments, line_of(&r.ident), false, name));
        }
        UseTree::Glob(g) => {
            let line = g.star_token.spans[0].start().line;
            out.push(leaf(prefix.clone(), line, true, None));
        }
        UseTree::Group(g) => {
            for tree in &g.items {
                flatten(tree, prefix, out);
            }
        }
    }
}

/// `a::b` + `c` is `a::b::c` binding `c`; `a::b` + `self` is `a::b` binding `b`.
fn joined(prefix: &[String], ident: &str) -> (Vec<String>, Option<String>) {
    let mut segments = prefix.to_vec();
    if ident != "self" {
        segments.push(ident.to_owned());
    }
    let name = segments.last().cloned();
    (segments, name)
}

fn line_of(ident: &syn::Ident) -> usize {
    ident.span().start().line
}

/// Every path named by one item of non-test code (nested test-only items are left out).
pub(crate) fn item_paths(item: &syn::Item) -> Vec<PathRef> {
    let mut collector = Collector::default();
    collector.visit_item(item);
    collector.refs
}

#[derive(Default)]
struct Collector {
    refs: Vec<PathRef>,
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        match item {
            // Inline modules are modules of their own, read by the module tree.
            syn::Item::Mod(_) => {}
            _ if is_test_only(item_attrs(item)) => {}
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_only(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, item: &'ast ItemUse) {
        self.refs
            .extend(use_leaves(item).into_iter().map(|leaf| leaf.path));
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && let Some(first) = path.segments.first()
        {
            self.refs.push(PathRef {
                segments: path.segments.iter().map(|s| s.ident.to_string()).collect(),
                line: line_of(&first.ident),
                glob: false,
            });
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        macro_paths(mac.tokens.clone(), &mut self.refs);
    }
}

/// Path-like sequences `a::b::c` inside a macro body. A single identifier counts only when it is
/// `crate`, `self` or `super` followed by more; `$crate` and `::a` paths are external.
fn macro_paths(tokens: TokenStream, out: &mut Vec<PathRef>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => macro_paths(g.stream(), out),
            TokenTree::Ident(ident) if !after_dollar_or_colons(&tokens, i) => {
                let mut segments = vec![ident.to_string()];
                let mut j = i + 1;
                while path_sep_at(&tokens, j)
                    && let Some(TokenTree::Ident(next)) = tokens.get(j + 2)
                {
                    segments.push(next.to_string());
                    j += 3;
                }
                if segments.len() > 1 {
                    out.push(PathRef {
                        segments,
                        line: ident.span().start().line,
                        glob: false,
                    });
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

fn path_sep_at(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

fn after_dollar_or_colons(tokens: &[TokenTree], i: usize) -> bool {
    let Some(prev) = i.checked_sub(1).and_then(|p| tokens.get(p)) else {
        return false;
    };
    match prev {
        TokenTree::Punct(p) if p.as_char() == '$' => true,
        TokenTree::Punct(p) if p.as_char() == ':' => i >= 2 && path_sep_at(tokens, i - 2),
        _ => false,
    }
}
