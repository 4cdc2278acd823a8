//! The normal-format renderer against the real `diff` binary, on YAML made by the emitter.

use std::process::Command;

use plumb_diff::normal_diff;

use crate::fixtures::load;

fn gnu_diff(old: &str, new: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("live"), dir.path().join("desired"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    let out = Command::new("diff")
        .arg(&a)
        .arg(&b)
        .output()
        .expect("the diff binary");
    String::from_utf8(out.stdout).unwrap()
}

fn yaml(name: &str) -> String {
    plumb_yaml::to_yaml_string(&load(name))
}

#[test]
fn matches_diff_binary_on_fixture_pairs() {
    let pairs = [
        ("deployment-live.yaml", "deployment-tampered-live.yaml"),
        ("deployment-config.yaml", "deployment-live.yaml"),
        ("deployment-image-bump-config.yaml", "deployment-live.yaml"),
        ("configmap-live.yaml", "configmap-edited-live.yaml"),
        ("service-config.yaml", "service-live.yaml"),
        ("statefulset-config.yaml", "statefulset-live.yaml"),
        ("secret-config.yaml", "secret-live.yaml"),
        ("service-live.yaml", "deployment-live.yaml"),
    ];
    for (a, b) in pairs {
        for (old, new) in [(yaml(a), yaml(b)), (yaml(b), yaml(a))] {
            assert_eq!(normal_diff(&old, &new), gnu_diff(&old, &new), "{a} vs {b}");
        }
    }
}

#[test]
fn matches_diff_binary_on_edge_cases() {
    let cases = [
        ("", "a\n"),
        ("a\n", ""),
        ("a\nb\nc\nd\n", "a\nc\nd\ne\n"),
        ("x\ny\nx\ny\n", "y\nx\ny\nx\n"),
        ("- a\n- b\n- a\n- b\n", "- a\n- b\n- c\n- a\n- b\n"),
        ("k: 1\nl: 2\n", "k: 1\nl: 2\n"),
        ("a\nb\n", "c\nd\n"),
    ];
    for (old, new) in cases {
        assert_eq!(
            normal_diff(old, new),
            gnu_diff(old, new),
            "{old:?} -> {new:?}"
        );
    }
}

#[test]
fn matches_diff_binary_on_generated_inputs() {
    // A small deterministic generator: files of 0-30 lines drawn from a 6-line alphabet, so
    // repeated lines (and so ties between equally short diffs) are common.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = [
        "- name: a\n",
        "  value: x\n",
        "- name: b\n",
        "  value: y\n",
        "spec:\n",
        "  replicas: 3\n",
    ];
    for _ in 0..300 {
        let mut make = || {
            let n = (next() % 31) as usize;
            (0..n)
                .map(|_| alphabet[(next() % 6) as usize])
                .collect::<String>()
        };
        let (old, new) = (make(), make());
        assert_eq!(
            normal_diff(&old, &new),
            gnu_diff(&old, &new),
            "{old:?} -> {new:?}"
        );
    }
}
