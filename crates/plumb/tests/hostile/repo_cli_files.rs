//! Files and values given to `plumb repo add`, `plumb repocreds add`, `plumb cert add-ssh` and
//! `plumb cert add-tls` (issue #27, "Bad input"): a private key that is no key, a public key
//! where a private one belongs, a GitHub App key that is not PEM, a TLS client certificate that
//! is not one, a known-hosts line that does not parse, a "certificate" that is a private key,
//! binary files, a huge file and an endless one (`/dev/zero`). Each is run as a user would,
//! in core mode and through a real `plumb server`: refused with exit code 2 and a message
//! naming the field or flag, bounded, never quoting the value, and nothing is stored.
//!
//! The checks themselves have unit tests beside them (`plumb-app/src/repo_admin/pem_check.rs`,
//! `fields.rs`, `certs/known_hosts.rs`, `certs/tls.rs`) and the API's own refusals are in
//! `plumb-server/tests/it/repositories.rs`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::running::{env, text};

/// What the files hold that must never be printed.
const SECRET: &str = "hostile-key-material-never-printed";

fn write(dir: &Path, name: &str, body: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

/// `plumb ARGS` in core mode over `ns`, or through the server at `server`.
fn plumb(ns: &str, server: Option<&str>, home: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
    cmd.args(args)
        .env("HOME", home)
        .env_remove("PLUMB_SERVER")
        .env_remove("PLUMB_NAMESPACE")
        .env("PLUMB_LOG", "debug")
        .stdin(Stdio::null());
    match server {
        Some(addr) => cmd.args(["--server", addr, "--plaintext"]),
        None => cmd
            .arg("--core")
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .args(["-N", ns]),
    };
    cmd.output().unwrap()
}

/// A PEM block `tag` around `body`.
fn pem(tag: &str, body: &str) -> String {
    format!(
        "-----BEGIN {tag}-----\n{}\n-----END {tag}-----\n",
        crate::secrets::b64(body)
    )
}

/// Each command line (`{name}`: a file of [`files`]; words split on spaces), its exit code and
/// what its message must name.
const CASES: &[(&str, i32, &str)] = &[
    (
        "repo add {ssh} --ssh-private-key-path {not_key}",
        2,
        "sshPrivateKey",
    ),
    (
        "repo add {ssh} --ssh-private-key-path {public}",
        2,
        "sshPrivateKey",
    ),
    (
        "repo add {ssh} --ssh-private-key-path {binary}",
        2,
        "--ssh-private-key-path",
    ),
    (
        "repo add {ssh} --ssh-private-key-path {huge}",
        2,
        "--ssh-private-key-path",
    ),
    (
        "repo add {ssh} --ssh-private-key-path /dev/zero",
        2,
        "--ssh-private-key-path",
    ),
    (
        "repo add {url} --github-app-id 1 --github-app-installation-id 2 --github-app-private-key-path {not_key}",
        2,
        "githubAppPrivateKey",
    ),
    (
        "repo add {url} --tls-client-cert-path {fake_cert} --tls-client-cert-key-path {key}",
        2,
        "tlsClientCertData",
    ),
    (
        "repo add {url} --tls-client-cert-path {key} --tls-client-cert-key-path {key}",
        2,
        "tlsClientCertData",
    ),
    (
        "repocreds add git@git.hostile.example:team --ssh-private-key-path {public}",
        2,
        "sshPrivateKey",
    ),
    (
        "repocreds add https://git.hostile.example/team --github-app-id 1 --github-app-installation-id 2 --github-app-private-key-path {binary}",
        2,
        "--github-app-private-key-path",
    ),
    ("cert add-ssh --batch --from {hosts}", 2, "github.com"),
    ("cert add-ssh --batch --from {hosts_type}", 2, "ssh-unknown"),
    // Argo's answer to a file without certificates: nothing stored, exit 0.
    (
        "cert add-tls git.hostile.example --from {key}",
        0,
        "No valid certificates have been detected in the stream.",
    ),
    (
        "cert add-tls git.hostile.example --from {fake_cert}",
        2,
        "X.509",
    ),
    (
        "cert add-tls git.hostile.example --from /dev/zero",
        2,
        "--from",
    ),
];

/// The files the cases name, written in `dir`.
fn files(dir: &Path) -> Vec<(&'static str, String)> {
    let w = |name: &str, body: &[u8]| write(dir, name, body);
    vec![
        ("url", "https://git.hostile.example/team/app.git".into()),
        ("ssh", "git@git.hostile.example:team/app.git".into()),
        ("not_key", w("not-a-key", format!("{SECRET}\n").as_bytes())),
        ("public", w("public.pem", pem("PUBLIC KEY", SECRET).as_bytes())),
        ("binary", w("binary", &[0xff, 0xfe, 0x00, 0x80, 0x81])),
        ("huge", w("huge", &vec![b'A'; 2 << 20])),
        ("fake_cert", w("fake.crt", pem("CERTIFICATE", SECRET).as_bytes())),
        ("key", w("key.pem", pem("PRIVATE KEY", SECRET).as_bytes())),
        (
            "hosts",
            w("known_hosts", format!("github.com ssh-ed25519 {SECRET}!!\n").as_bytes()),
        ),
        (
            "hosts_type",
            w(
                "known_hosts_type",
                b"github.com ssh-unknown AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n",
            ),
        ),
    ]
}

fn cases(dir: &Path) -> Vec<(Vec<String>, i32, &'static str)> {
    let files = files(dir);
    CASES
        .iter()
        .map(|(line, code, field)| {
            let words = line
                .split(' ')
                .map(|w| {
                    files
                        .iter()
                        .find(|(name, _)| w == format!("{{{name}}}"))
                        .map_or_else(|| w.to_string(), |(_, v)| v.clone())
                })
                .collect();
            (words, *code, *field)
        })
        .collect()
}

fn refused_naming_the_field(ns: &str, server: Option<&str>, dir: &Path) {
    let home = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    for (args, code, field) in cases(dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = plumb(ns, server, home.path(), &args);
        let err = text(&out.stderr);
        let what = format!("{server:?} {args:?}");
        // Argo prints its one non-error refusal on stdout.
        let err = format!("{err}{}", text(&out.stdout));
        if out.status.code() != Some(code) || !err.contains(field) {
            let code = out.status.code();
            problems.push(format!(
                "{what}: exit {code:?}, {field:?} expected in: {err}"
            ));
        }
        assert!(err.len() < 4096, "{what}: bounded: {err}");
        for shown in [SECRET.to_string(), crate::secrets::b64(SECRET)] {
            assert!(
                !err.contains(&shown) && !text(&out.stdout).contains(&shown),
                "{what}: {err}"
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Nothing was stored.
    for (args, empty) in [
        (&["repo", "list", "-o", "url"][..], ""),
        (&["repocreds", "list", "-o", "url"], ""),
    ] {
        let out = plumb(ns, server, home.path(), args);
        assert_eq!(text(&out.stdout), empty, "{args:?}: {}", text(&out.stderr));
    }
    let out = plumb(ns, server, home.path(), &["cert", "list"]);
    assert!(
        !text(&out.stdout).contains("hostile"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        !text(&out.stdout).contains("github.com"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn hostile_key_certificate_and_known_hosts_files_are_refused_in_core_mode_and_through_the_server() {
    let ns = env().namespace("hostile-repo-files");
    let dir = tempfile::tempdir().unwrap();
    refused_naming_the_field(ns.name(), None, dir.path());
    let server = crate::server::start_in(ns.name());
    let addr = server.addr.to_string();
    refused_naming_the_field(ns.name(), Some(&addr), dir.path());
    crate::server::healthy(server.addr);
    let log = server.log.text();
    assert!(
        !log.contains(SECRET),
        "the server's log shows a file's content"
    );
}
