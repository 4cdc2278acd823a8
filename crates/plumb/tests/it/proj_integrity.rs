//! `plumb proj source-integrity git policies list|add|update|delete` (Argo CD 3.6) in core mode
//! and through a real `plumb server`: Argo's table, messages, prompts and warnings, and the
//! AppProject as the API server stores it after each verb.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::app::{control_namespace, env, text};
use crate::server_cli::{all, login_admin, start_server_with};

const KEY: &str = "4AEE18F83AFDEB23";
const FPR: &str = "ABCDEF0123456789ABCDEF011111222233334444";

fn stored(ns: &str) -> Value {
    let out = env()
        .kubectl()
        .args([
            "-n",
            ns,
            "get",
            "appprojects.argoproj.io",
            "team",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.pointer("/spec/sourceIntegrity")
        .cloned()
        .unwrap_or(Value::Null)
}

fn run(cmd: &mut Command, stdin: &str) -> Output {
    let mut child = cmd
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Every verb, with `plumb` running `proj ARGS` (stdin fed) one way or the other.
fn every_verb(ns: &str, plumb: &dyn Fn(&[&str], &str) -> Output) {
    let ok = |args: &[&str], stdin: &str| {
        let out = plumb(args, stdin);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", all(&out));
        (text(&out.stdout), text(&out.stderr))
    };
    let fails = |args: &[&str], message: &str| {
        let out = plumb(args, "");
        assert_ne!(out.status.code(), Some(0), "{args:?}: {}", all(&out));
        assert!(all(&out).contains(message), "{args:?}: {}", all(&out));
    };
    ok(&["proj", "create", "team"], "");
    fails(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "list",
            "team",
        ],
        "no source integrity git policies defined for project \"team\"",
    );
    fails(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "add",
            "team",
            "--gpg-mode",
            "all",
        ],
        "gpg-mode must be one of: strict, head, none",
    );
    // Add: the key stored as its ID, the table printed, the missing key warned about.
    let (out, err) = ok(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "add",
            "team",
            "--repo-url",
            "https://github.com/foo/*",
            "--gpg-mode",
            "strict",
            "--gpg-key",
            FPR,
        ],
        "",
    );
    assert_eq!(
        out,
        "ID  GPG-MODE  GPG-KEYS          REPO-URLS\n0   strict    1111222233334444  https://github.com/foo/*\n"
    );
    assert_eq!(
        err,
        "Warning: Following GPG keys are not in repo-server keyring: 1111222233334444\n"
    );
    ok(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "add",
            "team",
            "--gpg-mode",
            "none",
        ],
        "",
    );
    assert_eq!(
        stored(ns),
        json!({"git": {"policies": [
            {"repos": [{"url": "https://github.com/foo/*"}], "gpg": {"mode": "strict", "keys": ["1111222233334444"]}},
            {"repos": [], "gpg": {"mode": "none", "keys": []}}
        ]}})
    );
    let (out, _) = ok(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "list",
            "team",
        ],
        "",
    );
    assert_eq!(
        out,
        "ID  GPG-MODE  GPG-KEYS          REPO-URLS\n\
         0   strict    1111222233334444  https://github.com/foo/*\n\
         1   none      <none>            <none>\n"
    );
    // Update: refused at the prompt, then confirmed.
    let update = [
        "proj",
        "source-integrity",
        "git",
        "policies",
        "update",
        "team",
        "1",
        "--add-repo-url",
        "https://gitlab.com/*",
        "--gpg-mode",
        "head",
        "--add-gpg-key",
        KEY,
    ];
    let (out, _) = ok(&update, "n\n");
    assert!(
        out.ends_with("Are you sure you want to update policy 1 from project \"team\"? [y/N] Aborted by user.\n"),
        "{out}"
    );
    assert_eq!(stored(ns)["git"]["policies"][1]["gpg"]["mode"], "none");
    ok(&update, "y\n");
    assert_eq!(
        stored(ns)["git"]["policies"][1],
        json!({"repos": [{"url": "https://gitlab.com/*"}], "gpg": {"mode": "head", "keys": [KEY]}})
    );
    fails(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "update",
            "team",
            "2",
            "-y",
        ],
        "the POLICY_ID 2 is out of range (0-1)",
    );
    // Delete: both, with -y; the field goes away with the last policy.
    fails(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "delete",
            "team",
            "x",
            "-y",
        ],
        "invalid POLICY_ID 'x'",
    );
    let (out, _) = ok(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "delete",
            "team",
            "0",
            "1",
        ],
        "no\n",
    );
    assert_eq!(
        out,
        "Are you sure you want to delete policies 0, 1 from project \"team\"? [y/N] Aborted by user.\n"
    );
    ok(
        &[
            "proj",
            "source-integrity",
            "git",
            "policies",
            "delete",
            "team",
            "1",
            "0",
            "-y",
        ],
        "",
    );
    assert_eq!(stored(ns), Value::Null);
}

#[test]
fn source_integrity_policies_in_core_mode() {
    let ns = control_namespace("proj-integrity");
    let home = tempfile::tempdir().unwrap();
    let name = ns.name().to_string();
    let plumb = |args: &[&str], stdin: &str| {
        run(
            Command::new(env!("CARGO_BIN_EXE_plumb"))
                .args(args)
                .arg("--kubeconfig")
                .arg(env().kubeconfig())
                .args(["-N", &name])
                .env("HOME", home.path())
                .env_remove("PLUMB_NAMESPACE")
                .env_remove("PLUMB_SERVER"),
            stdin,
        )
    };
    every_verb(ns.name(), &plumb);
}

#[test]
fn source_integrity_policies_through_the_server() {
    let ns = control_namespace("proj-integrity-srv");
    let cache = tempfile::tempdir().unwrap();
    let plugins = tempfile::tempdir().unwrap();
    let (_server, addr) = start_server_with(
        ns.name(),
        cache.path(),
        plugins.path(),
        &["--metrics-addr", "off"],
    );
    let home = tempfile::tempdir().unwrap();
    let password = plumb_testenv::process::initial_admin_password(env(), ns.name());
    let out = login_admin(home.path(), &addr.to_string(), &password);
    assert!(out.status.success(), "{}", all(&out));
    let plumb = |args: &[&str], stdin: &str| remote(home.path(), args, stdin);
    every_verb(ns.name(), &plumb);
}

/// `plumb ARGS` as a user without cluster credentials (the server's context only).
fn remote(home: &Path, args: &[&str], stdin: &str) -> Output {
    run(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(args)
            .env_clear()
            .env("HOME", home)
            .env("PATH", home.join("empty-bin")),
        stdin,
    )
}
