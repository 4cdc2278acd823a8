//! Diffs sent as JSON (what `plumb server` puts in a ResourceDiff's `diff`, one `render_json`
//! document per object) render to exactly what `render` prints for the diffs themselves, in
//! every format, with and without attribution: `plumb app diff` reads the same through the
//! server as in core mode.

use plumb_diff::{
    DiffConfig, DiffFormat, MaskedDiff, RenderOptions, Strategy, mask, render, render_json,
    render_wire,
};
use serde_json::Value;

use crate::fixtures::{load, three_way};

/// What the server sends for one object, read back as the CLI reads it.
fn wire(d: &MaskedDiff) -> Value {
    let doc: Value = serde_json::from_str(&render_json(std::slice::from_ref(d))).unwrap();
    doc.as_array().unwrap()[0].clone()
}

fn diffs() -> Vec<plumb_diff::DiffResult> {
    let created = {
        let opts = plumb_diff::PairOptions {
            default_namespace: "payments".into(),
            ..Default::default()
        };
        let desired = plumb_diff::SourcedObject {
            value: load("service-config.yaml"),
            source: "svc.yaml".into(),
        };
        let pairs = plumb_diff::pair(vec![desired], vec![], &opts).unwrap();
        plumb_diff::diff(&pairs[0], Strategy::ThreeWay, &DiffConfig::default()).unwrap()
    };
    vec![
        // Removed and changed fields, exact and inexact attributions.
        three_way("deployment-config.yaml", "deployment-tampered-live.yaml"),
        three_way("configmap-config.yaml", "configmap-edited-live.yaml"),
        // A Secret: masked values only.
        three_way("secret-rotated-config.yaml", "secret-live.yaml"),
        created,
    ]
}

#[test]
fn json_sent_by_the_server_renders_as_the_diffs_do() {
    let results = diffs();
    assert!(
        results[0]
            .changes
            .iter()
            .any(|c| c.attribution.as_ref().is_some_and(|a| !a.exact)),
        "the fixture has an inexact attribution"
    );
    let masked: Vec<MaskedDiff> = results.iter().map(mask).collect();
    let sent: Vec<Value> = masked.iter().map(wire).collect();
    // Without attribution the core mode computes none: the same diffs, attribution removed.
    let unattributed: Vec<MaskedDiff> = results
        .iter()
        .cloned()
        .map(|mut r| {
            for c in &mut r.changes {
                c.attribution = None;
            }
            mask(&r)
        })
        .collect();
    for format in [DiffFormat::Normal, DiffFormat::Unified, DiffFormat::Json] {
        for attribution in [true, false] {
            let opts = RenderOptions {
                format,
                attribution,
                external: None,
            };
            let mut expected = Vec::new();
            let source = if attribution { &masked } else { &unattributed };
            render(source, &opts, &mut expected).unwrap();
            let mut got = Vec::new();
            render_wire(&sent, &opts, &mut got).unwrap();
            let (expected, got) = (
                String::from_utf8(expected).unwrap(),
                String::from_utf8(got).unwrap(),
            );
            assert_eq!(got, expected, "{format:?}, attribution {attribution}");
            if attribution && format != DiffFormat::Json {
                assert!(got.contains("# "), "attribution lines printed:\n{got}");
            }
        }
    }
}
