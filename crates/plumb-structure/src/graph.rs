//! The dependency graph between the modules of a crate, and its circles (Tarjan's strongly
//! connected components with more than one module).

use std::collections::BTreeMap;

use crate::model::{Circle, EdgeCause};
use crate::resolve::{Target, resolve};
use crate::tree::Tree;

/// The first path of `from` that names an item defined in `to`.
struct Cause {
    line: usize,
    path: String,
}

/// Edges `(from, to)` with their first cause; self edges are left out.
fn edges(tree: &Tree) -> BTreeMap<(usize, usize), Cause> {
    let mut edges = BTreeMap::new();
    for (from, module) in tree.modules.iter().enumerate() {
        for path in &module.refs {
            let to = match resolve(tree, from, &path.segments) {
                Some(Target::Item(to)) => to,
                Some(Target::Module(to)) if path.glob => to,
                _ => continue,
            };
            if to != from {
                edges.entry((from, to)).or_insert_with(|| Cause {
                    line: path.line,
                    path: path.text(),
                });
            }
        }
    }
    edges
}

/// The circles of the crate, with paths prefixed by `prefix` (`crates/<dir>/`).
pub(crate) fn circles(tree: &Tree, prefix: &str) -> Vec<Circle> {
    let edges = edges(tree);
    let mut next = vec![Vec::new(); tree.modules.len()];
    for &(from, to) in edges.keys() {
        next[from].push(to);
    }
    let shown = |m: usize| format!("{prefix}{}", tree.modules[m].name);
    let mut circles: Vec<Circle> = components(&next)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|members| {
            let mut modules: Vec<String> = members.iter().map(|&m| shown(m)).collect();
            modules.sort();
            let mut causes: Vec<EdgeCause> = edges
                .iter()
                .filter(|((from, to), _)| members.contains(from) && members.contains(to))
                .map(|(&(from, to), cause)| EdgeCause {
                    from: shown(from),
                    to: shown(to),
                    file: format!("{prefix}{}", tree.modules[from].file),
                    line: cause.line,
                    path: cause.path.clone(),
                })
                .collect();
            causes.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
            Circle {
                modules,
                edges: causes,
            }
        })
        .collect();
    circles.sort_by(|a, b| a.modules.cmp(&b.modules));
    circles
}

/// Tarjan's strongly connected components of the graph `next` (node -> successors).
fn components(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut state = Tarjan {
        next,
        index: vec![None; next.len()],
        low: vec![0; next.len()],
        on_stack: vec![false; next.len()],
        stack: Vec::new(),
        counter: 0,
        found: Vec::new(),
    };
    for node in 0..next.len() {
        if state.index[node].is_none() {
            state.visit(node);
        }
    }
    state.found
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    found: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, node: usize) {
        self.index[node] = Some(self.counter);
        self.low[node] = self.counter;
        self.counter += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
        for &succ in &self.next[node] {
            match self.index[succ] {
                None => {
                    self.visit(succ);
                    self.low[node] = self.low[node].min(self.low[succ]);
                }
                Some(i) if self.on_stack[succ] => self.low[node] = self.low[node].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[node]) == self.index[node] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack[member] = false;
                component.push(member);
                if member == node {
                    break;
                }
            }
            self.found.push(component);
        }
    }
}
