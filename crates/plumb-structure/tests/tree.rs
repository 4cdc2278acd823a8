//! The structure rules of issue #25 hold for this workspace: no import circle between the modules
//! of a crate, no function over 80 lines without a `// length: <reason>` comment.

use std::path::Path;

#[test]
fn the_workspace_keeps_the_structure_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let analysis = plumb_structure::analyze_workspace(&root).expect("workspace sources parse");
    assert!(
        !analysis.fails(80),
        "{}",
        plumb_structure::render(&analysis, 80)
    );
}
