//! The checker on small crates written inline.

use std::collections::BTreeMap;

use plumb_structure::{CrateReport, analyze_sources};

fn check(files: &[(&str, &str)]) -> CrateReport {
    let sources: BTreeMap<String, String> = files
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    analyze_sources("fixture", &sources).expect("fixture crate parses")
}

/// A function of `lines` lines (signature to closing brace).
fn long_fn(name: &str, lines: usize) -> String {
    format!(
        "fn {name}() {{\n{}}}\n",
        "    let _x = 1;\n".repeat(lines - 2)
    )
}

fn circle_modules(report: &CrateReport) -> Vec<Vec<String>> {
    report.circles.iter().map(|c| c.modules.clone()).collect()
}

#[test]
fn child_naming_its_parent_through_super_is_a_circle() {
    let report = check(&[
        (
            "src/lib.rs",
            "mod a;\npub struct Top;\npub fn run() { a::go(); }\n",
        ),
        (
            "src/a.rs",
            "use super::Top;\npub fn go() { let _ = Top; }\n",
        ),
    ]);
    assert_eq!(
        circle_modules(&report),
        [["crates/fixture/src/a.rs", "crates/fixture/src/lib.rs"]]
    );
    let edges: Vec<(String, usize, String)> = report.circles[0]
        .edges
        .iter()
        .map(|e| (e.file.clone(), e.line, e.path.clone()))
        .collect();
    assert_eq!(
        edges,
        [
            (
                "crates/fixture/src/a.rs".to_owned(),
                1,
                "super::Top".to_owned()
            ),
            (
                "crates/fixture/src/lib.rs".to_owned(),
                3,
                "a::go".to_owned()
            ),
        ]
    );
}

#[test]
fn a_path_through_a_reexport_depends_on_the_defining_module() {
    let report = check(&[
        (
            "src/lib.rs",
            "mod inner;\nmod user;\npub use inner::Thing;\npub fn run() { user::go(); }\n",
        ),
        ("src/inner.rs", "pub struct Thing;\n"),
        (
            "src/user.rs",
            "use crate::Thing;\npub fn go() { let _ = Thing; let _ = crate::Thing; }\n",
        ),
    ]);
    assert!(report.circles.is_empty(), "{:?}", report.circles);
}

#[test]
fn a_path_inside_a_macro_body_counts() {
    let report = check(&[
        (
            "src/lib.rs",
            "mod a;\npub fn helper() -> u8 { 1 }\npub fn run() { a::go(); }\n",
        ),
        (
            "src/a.rs",
            "pub fn go() {\n    println!(\"{}\", crate::helper());\n}\n",
        ),
    ]);
    assert_eq!(report.circles.len(), 1);
    let back = &report.circles[0].edges[0];
    assert_eq!((back.line, back.path.as_str()), (2, "crate::helper"));
}

#[test]
fn a_glob_import_of_the_parent_depends_on_the_parent() {
    let report = check(&[
        ("src/lib.rs", "mod a;\npub fn run() { a::go(); }\n"),
        ("src/a.rs", "use super::*;\npub fn go() {}\n"),
    ]);
    assert_eq!(report.circles.len(), 1);
    assert_eq!(report.circles[0].edges[0].path, "super::*");
}

#[test]
fn a_parent_that_only_declares_and_reexports_makes_no_circle() {
    let report = check(&[
        ("src/lib.rs", "mod a;\nmod b;\npub use a::go;\n"),
        ("src/a.rs", "pub fn go() { crate::b::help(); }\n"),
        ("src/b.rs", "pub fn help() {}\n"),
    ]);
    assert!(report.circles.is_empty(), "{:?}", report.circles);
}

#[test]
fn a_long_function_needs_a_length_reason() {
    let source = format!(
        "{}\n// length: a table of routes\n/// Docs.\n#[inline]\n{}\n/// Docs.\n// length:\n{}",
        long_fn("plain", 90),
        long_fn("explained", 95),
        long_fn("empty_reason", 85),
    );
    let report = check(&[("src/lib.rs", &source)]);
    let found: Vec<(&str, usize, Option<&str>)> = report
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.length, f.reason.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            ("plain", 90, None),
            ("explained", 95, Some("a table of routes")),
            ("empty_reason", 85, None),
        ]
    );
    let analysis = plumb_structure::Analysis {
        crates: vec![report],
    };
    let over: Vec<&str> = analysis
        .violations(80)
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(over, ["plain", "empty_reason"]);
    assert!(analysis.fails(80));
    assert!(!analysis.fails(100));
}

#[test]
fn test_only_code_is_not_checked() {
    let tests_mod = format!(
        "#[cfg(test)]\nmod tests {{\n    use super::super::run;\n{}}}\n#[cfg(test)]\nmod more;\n",
        long_fn("long_test", 120)
    );
    let a = format!("pub fn go() {{}}\n{tests_mod}");
    let report = check(&[
        ("src/lib.rs", "mod a;\npub fn run() { a::go(); }\n"),
        ("src/a.rs", &a),
        (
            "src/a/more.rs",
            &format!("mod deeper;\n{}", long_fn("long_file_test", 150)),
        ),
        ("src/a/more/deeper.rs", "fn f() {}\n"),
    ]);
    assert!(report.circles.is_empty(), "{:?}", report.circles);
    let names: Vec<&str> = report.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["go", "run"]);
    assert_eq!(report.lines, 1 + 2, "lib.rs 2 lines, a.rs 1 non-test line");
    assert!(report.unreached.is_empty(), "{:?}", report.unreached);
}

#[test]
fn a_nested_function_is_counted_on_its_own() {
    let source = "pub struct S;\nimpl S {\n    pub fn outer(&self) {\n        fn inner() {\n            let _ = 1;\n        }\n        inner();\n    }\n}\n";
    let report = check(&[("src/lib.rs", source)]);
    let found: Vec<(&str, usize, usize)> = report
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.length))
        .collect();
    assert_eq!(found, [("S::outer", 3, 6), ("S::outer::inner", 4, 3)]);
}

#[test]
fn inline_modules_are_modules() {
    let report = check(&[(
        "src/lib.rs",
        "pub struct Top;\nmod a {\n    pub fn go() { let _ = super::Top; }\n}\npub fn run() { a::go(); }\n",
    )]);
    assert_eq!(
        circle_modules(&report),
        [["crates/fixture/src/lib.rs", "crates/fixture/src/lib.rs::a"]]
    );
}
