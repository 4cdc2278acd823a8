//! docs/security.md's table of Argo CD's security advisories is Plumb's regression suite for
//! them: each row names the tests that show the class refused, or says why none can exist yet
//! (the feature is absent, with the issue that brings it, or the class cannot apply). This check
//! keeps the table honest: a row that names a test which does not exist, or that is still
//! waiting for one, fails the suite.

use std::path::Path;

/// The heading of the table's section in docs/security.md.
const SECTION: &str = "## Argo CD's security advisories";

fn repo_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The table rows of the advisories section: (advisory, Plumb's answer).
fn rows(doc: &str) -> Vec<(String, String)> {
    let Some(start) = doc.find(SECTION) else {
        panic!("docs/security.md has no section {SECTION:?}");
    };
    let section = &doc[start + SECTION.len()..];
    let section = section.find("\n## ").map_or(section, |end| &section[..end]);
    section
        .lines()
        .filter(|l| l.starts_with("| GHSA-") || l.starts_with("| CVE-") || l.starts_with("| —"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a row has four cells: {l}");
            (cells[0].to_string(), cells[3].to_string())
        })
        .collect()
}

/// The `path::fn` references of a cell, in backticks.
fn references(cell: &str) -> Vec<(String, String)> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|r| {
            let (path, name) = r
                .rsplit_once("::")
                .unwrap_or_else(|| panic!("{r:?} is not path::fn"));
            (path.to_string(), name.to_string())
        })
        .collect()
}

/// Whether `file` holds a test function `name` (`#[test]` or `#[tokio::test]` above it).
fn has_test(file: &str, name: &str) -> bool {
    let lines: Vec<&str> = file.lines().collect();
    lines.iter().enumerate().any(|(i, l)| {
        let l = l.trim_start();
        let named =
            l.starts_with(&format!("fn {name}(")) || l.starts_with(&format!("async fn {name}("));
        named
            && lines[i.saturating_sub(4)..i]
                .iter()
                .any(|a| a.trim_start().starts_with("#[test]") || a.contains("#[tokio::test"))
    })
}

#[test]
fn every_advisory_row_names_tests_that_exist_or_says_why_there_is_none() {
    let doc = std::fs::read_to_string(repo_root().join("docs/security.md")).unwrap();
    let rows = rows(&doc);
    assert!(
        rows.len() >= 60,
        "the table lists every advisory: {} rows",
        rows.len()
    );
    let mut problems = Vec::new();
    for (advisory, answer) in &rows {
        let refs = references(answer);
        if refs.is_empty() {
            let reasoned =
                answer.starts_with("feature absent (#") || answer.starts_with("not applicable: ");
            if !reasoned {
                problems.push(format!("{advisory}: no test and no reason: {answer}"));
            }
            continue;
        }
        for (path, name) in refs {
            match std::fs::read_to_string(repo_root().join(&path)) {
                Ok(text) if has_test(&text, &name) => {}
                Ok(_) => problems.push(format!("{advisory}: no test fn {name} in {path}")),
                Err(e) => problems.push(format!("{advisory}: {path}: {e}")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/security.md:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_itself_finds_a_missing_test_and_a_row_without_reason() {
    let doc = format!(
        "{SECTION}\n\n| advisory | year | class | Plumb |\n|---|---|---|---|\n\
         | GHSA-a | 2024 | x | `crates/plumb/tests/hostile/advisories.rs::no_such_test` |\n\
         | GHSA-b | 2024 | y | needs test |\n\n## Next\n| GHSA-c | 1 | 2 | 3 |\n"
    );
    let rows = rows(&doc);
    assert_eq!(rows.len(), 2, "only the section's rows: {rows:?}");
    let file =
        std::fs::read_to_string(repo_root().join("crates/plumb/tests/hostile/advisories.rs"))
            .unwrap();
    let (path, name) = references(&rows[0].1).remove(0);
    assert_eq!(path, "crates/plumb/tests/hostile/advisories.rs");
    assert!(!has_test(&file, &name));
    assert!(has_test(
        &file,
        "every_advisory_row_names_tests_that_exist_or_says_why_there_is_none"
    ));
    assert!(references(&rows[1].1).is_empty());
}
