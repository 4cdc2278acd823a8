//! The printed report: circles, functions over the limit, exceptions, and the counts table.

use std::fmt::Write;

use crate::model::{Analysis, Circle, CrateReport};

/// The report of `analysis` with `max_lines` as the function length limit; the same analysis
/// always gives the same text.
pub fn render(analysis: &Analysis, max_lines: usize) -> String {
    let mut out = String::new();
    circles(&mut out, analysis);
    violations(&mut out, analysis, max_lines);
    exceptions(&mut out, analysis);
    unreached(&mut out, analysis);
    counts(&mut out, analysis);
    out
}

fn circles(out: &mut String, analysis: &Analysis) {
    let all: Vec<&Circle> = analysis.circles().collect();
    let _ = writeln!(out, "Import circles: {}", all.len());
    for (n, circle) in all.iter().enumerate() {
        let _ = writeln!(out, "  circle {}:", n + 1);
        for module in &circle.modules {
            let _ = writeln!(out, "    {module}");
        }
        for edge in &circle.edges {
            let _ = writeln!(out, "      {} -> {}", edge.from, edge.to);
            let _ = writeln!(out, "          {}:{}  {}", edge.file, edge.line, edge.path);
        }
    }
    out.push('\n');
}

fn violations(out: &mut String, analysis: &Analysis, max_lines: usize) {
    let over = analysis.violations(max_lines);
    let _ = writeln!(
        out,
        "Functions over {max_lines} lines without a `// length:` reason: {}",
        over.len()
    );
    for f in over {
        let _ = writeln!(out, "  {:>5}  {}:{}  {}", f.length, f.file, f.line, f.name);
    }
    out.push('\n');
}

fn exceptions(out: &mut String, analysis: &Analysis) {
    let mut with_reason: Vec<_> = analysis
        .crates
        .iter()
        .flat_map(|c| &c.functions)
        .filter(|f| f.reason.is_some())
        .collect();
    with_reason.sort_by(|a, b| (b.length, &a.file, a.line).cmp(&(a.length, &b.file, b.line)));
    let _ = writeln!(
        out,
        "Functions with a `// length:` reason: {}",
        with_reason.len()
    );
    for f in with_reason {
        let reason = f.reason.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>5}  {}:{}  {}  -- {reason}",
            f.length, f.file, f.line, f.name
        );
    }
    out.push('\n');
}

fn unreached(out: &mut String, analysis: &Analysis) {
    let files: Vec<&String> = analysis.crates.iter().flat_map(|c| &c.unreached).collect();
    if files.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Files under src/ that no module tree loads (not checked): {}",
        files.len()
    );
    for file in files {
        let _ = writeln!(out, "  {file}");
    }
    out.push('\n');
}

fn counts(out: &mut String, analysis: &Analysis) {
    let width = analysis
        .crates
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let row = |out: &mut String, name: &str, cells: [usize; 5]| {
        let [lines, a, b, c, d] = cells;
        let _ = writeln!(
            out,
            "{name:<width$}  {lines:>6}  {a:>6}  {b:>6}  {c:>7}  {d:>7}"
        );
    };
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>6}  {:>6}  {:>7}  {:>7}",
        "crate", "lines", "fns>60", "fns>80", "fns>100", "circles"
    );
    let mut total = [0; 5];
    for c in &analysis.crates {
        let cells = crate_cells(c);
        for (t, v) in total.iter_mut().zip(cells) {
            *t += v;
        }
        row(out, &c.name, cells);
    }
    row(out, "total", total);
}

fn crate_cells(c: &CrateReport) -> [usize; 5] {
    [
        c.lines,
        c.over(60),
        c.over(80),
        c.over(100),
        c.circles.len(),
    ]
}
