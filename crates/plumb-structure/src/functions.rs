//! Function lengths of one file's non-test code, and the lines its test-only items take.

use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Attribute, Block, Signature, Visibility};

use crate::attrs::{is_test_only, item_attrs};
use crate::model::FunctionLen;

/// What one file holds: its functions, and how many of its lines are test-only items.
pub(crate) struct FileFunctions {
    pub(crate) functions: Vec<FunctionLen>,
    pub(crate) test_lines: usize,
}

/// The functions of `ast`, whose text is `text`, shown as `file`.
pub(crate) fn functions(ast: &syn::File, text: &str, file: &str) -> FileFunctions {
    let lines: Vec<&str> = text.lines().collect();
    let mut collector = Collector {
        lines: &lines,
        file,
        scope: Vec::new(),
        functions: Vec::new(),
        test_lines: 0,
    };
    collector.visit_file(ast);
    FileFunctions {
        functions: collector.functions,
        test_lines: collector.test_lines,
    }
}

struct Collector<'a> {
    lines: &'a [&'a str],
    file: &'a str,
    /// Names enclosing the current function: impl type, trait, outer function.
    scope: Vec<String>,
    functions: Vec<FunctionLen>,
    test_lines: usize,
}

/// The parts of any function with a body.
struct FnParts<'a> {
    attrs: &'a [Attribute],
    vis: Option<&'a Visibility>,
    sig: &'a Signature,
    block: &'a Block,
}

impl Collector<'_> {
    fn skip_test(&mut self, attrs: &[Attribute], node: &impl Spanned) -> bool {
        if !is_test_only(attrs) {
            return false;
        }
        let span = node.span();
        self.test_lines += span.end().line + 1 - span.start().line;
        true
    }

    fn record(&mut self, f: FnParts<'_>) {
        let sig_line = match f.vis {
            Some(vis) if !matches!(vis, Visibility::Inherited) => vis.span().start().line,
            _ => f.sig.span().start().line,
        };
        let end = f.block.brace_token.span.close().start().line;
        let first = f
            .attrs
            .iter()
            .map(|a| a.pound_token.span.start().line)
            .fold(sig_line, usize::min);
        let name = self
            .scope
            .iter()
            .cloned()
            .chain([f.sig.ident.to_string()])
            .collect::<Vec<_>>();
        self.functions.push(FunctionLen {
            file: self.file.to_owned(),
            line: sig_line,
            name: name.join("::"),
            length: end + 1 - sig_line,
            reason: length_reason(self.lines, first, sig_line),
        });
    }

    fn within<T>(&mut self, name: String, node: &T, visit: impl FnOnce(&mut Self, &T)) {
        self.scope.push(name);
        visit(self, node);
        self.scope.pop();
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !self.skip_test(item_attrs(item), item) {
            visit::visit_item(self, item);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let parts = FnParts {
            attrs: &f.attrs,
            vis: Some(&f.vis),
            sig: &f.sig,
            block: &f.block,
        };
        self.record(parts);
        self.within(f.sig.ident.to_string(), f, |c, f| {
            visit::visit_item_fn(c, f)
        });
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let name = type_name(&i.self_ty);
        self.within(name, i, |c, i| visit::visit_item_impl(c, i));
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.within(t.ident.to_string(), t, |c, t| visit::visit_item_trait(c, t));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if self.skip_test(&f.attrs, f) {
            return;
        }
        let parts = FnParts {
            attrs: &f.attrs,
            vis: Some(&f.vis),
            sig: &f.sig,
            block: &f.block,
        };
        self.record(parts);
        self.within(f.sig.ident.to_string(), f, |c, f| {
            visit::visit_impl_item_fn(c, f)
        });
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        let Some(block) = &f.default else { return };
        let parts = FnParts {
            attrs: &f.attrs,
            vis: None,
            sig: &f.sig,
            block,
        };
        self.record(parts);
        self.within(f.sig.ident.to_string(), f, |c, f| {
            visit::visit_trait_item_fn(c, f)
        });
    }
}

/// `Foo` for `impl Foo<T>`, `impl Trait for Foo`, `impl Foo`; the type's text otherwise.
fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map_or_else(String::new, |s| s.ident.to_string()),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => "_".to_owned(),
    }
}

/// The reason of a `// length: <reason>` line between the attributes (from line `first`) and the
/// signature, or in the block of `//` comment lines directly above them.
fn length_reason(lines: &[&str], first: usize, sig_line: usize) -> Option<String> {
    let line = |n: usize| lines.get(n.checked_sub(1)?).map(|l| l.trim());
    let above = (1..first)
        .rev()
        .map_while(|n| line(n).filter(|l| l.starts_with("//")));
    let within = (first..sig_line).filter_map(line);
    within.chain(above).find_map(|l| {
        let reason = l
            .strip_prefix("//")?
            .trim_start()
            .strip_prefix("length:")?
            .trim();
        (!reason.is_empty()).then(|| reason.to_owned())
    })
}
