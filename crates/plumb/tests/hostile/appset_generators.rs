//! Attacks: ApplicationSet generator input, through `plumb appset generate FILE` (the preview a
//! pull request runs on a tenant's file, with the generators the controller runs). A tenant
//! points a git generator out of the repository (`../`, a symlink), has a files generator read a
//! huge or deeply nested file, writes a goTemplate that loops or explodes or renders an invalid
//! name, or names a plugin or SCM provider that hangs, answers garbage, slowly or with 500s
//! (loopback servers here). Each ends in bounded time with an error naming the generator, file
//! or field, never a panic, and never prints the plugin's or forge's token.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::running::{env, kubectl_apply, text};

const TOKEN: &str = "hostile-agen-s3cr3t";
/// Far above the 30 s HTTP timeout of a generator: a preview still running then is stuck.
const BOUND: Duration = Duration::from_secs(180);

/// The request head and body a client sent (read until its Content-Length).
fn read_request(s: &mut TcpStream) -> String {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let t = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = t.find("\r\n\r\n") {
            let len = t[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return t;
            }
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn http(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A loopback server answering each request with `answer(request)` after `delay`; `None`
/// never answers (the connection stays open).
fn serve(delay: Duration, answer: fn(&str) -> Option<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let req = read_request(&mut s);
                std::thread::sleep(delay);
                match answer(&req) {
                    Some(resp) => {
                        let _ = s.write_all(resp.as_bytes());
                    }
                    None => std::thread::sleep(Duration::from_secs(3600)),
                }
            });
        }
    });
    format!("http://{addr}")
}

/// Three repositories: one with a file nested 100,000 levels deep, one with a 65 MiB file, one
/// with a link out of it (the last two are refused whole at checkout, so none can share).
fn hostile_repos() -> [GitRepo; 3] {
    let deep = GitRepo::new();
    let text = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    deep.commit(&[("deep/config.json", text.as_str())], "deep");
    let huge = GitRepo::new();
    std::fs::create_dir_all(huge.path().join("huge")).unwrap();
    let file = std::fs::File::create(huge.path().join("huge/config.json")).unwrap();
    file.set_len(65 << 20).unwrap();
    huge.commit_all("huge");
    let linked = GitRepo::new();
    linked.commit(&[("apps/good/config.yaml", "name: good\n")], "good");
    linked.commit_symlink("apps/evil/config.yaml", "/etc/passwd", "link out");
    [deep, huge, linked]
}

/// An ApplicationSet named `name` with `generator`, its template naming Applications `name`.
fn set(name: &str, generator: Value, app_name: &str, go_template: bool) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": name},
        "spec": {
            "goTemplate": go_template,
            "generators": [generator],
            "template": {
                "metadata": {"name": app_name},
                "spec": {"project": "default",
                         "source": {"repoURL": "https://example.com/apps.git", "path": "x"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}
            }
        }
    })
}

/// The hostile sets, each with what its error must say.
fn cases(
    repos: &[GitRepo; 3],
    plugin_hang: &str,
    plugin_garbage: &str,
) -> Vec<(&'static str, Value, Vec<&'static str>)> {
    let [deep, huge, linked] = repos.each_ref().map(GitRepo::url);
    let git = |url: &str, path: &str| json!({"git": {"repoURL": url, "revision": "HEAD", "files": [{"path": path}]}});
    let dotdot =
        json!({"git": {"repoURL": deep, "revision": "HEAD", "directories": [{"path": "../*"}]}});
    let list = json!({"list": {"elements": [{"name": "Bad_Name!"}]}});
    let link = git(&linked, "apps/*/config.yaml");
    let one = json!({"list": {"elements": [{"name": "x"}]}});
    let plugin = |cm: &str| json!({"plugin": {"configMapRef": {"name": cm}}});
    let scm = |api: String| {
        json!({"scmProvider": {"gitea": {"owner": "o", "api": api, "insecure": true,
                "tokenRef": {"secretName": "hostile-agen-token", "key": "token"}}}})
    };
    let five_hundred = serve(Duration::ZERO, |req| {
        // The answer echoes the request, token included: an error quoting it would leak it.
        Some(http(
            "500 Internal Server Error",
            &format!("{{\"message\": {:?}}}", req),
        ))
    });
    let slow = serve(Duration::from_secs(90), |_| Some(http("200 OK", "[]")));
    vec![
        (
            "dotdot",
            set("dotdot", dotdot, "{{path.basename}}", false),
            vec!["git", "leads outside the repository"],
        ),
        (
            "symlink",
            set("symlink", link, "{{name}}", false),
            vec!["git", "apps/evil/config.yaml"],
        ),
        (
            "huge",
            set("huge", git(&huge, "huge/config.json"), "x", false),
            vec!["git", "huge/config.json"],
        ),
        (
            "deep",
            set("deep", git(&deep, "deep/config.json"), "x", false),
            vec!["deep/config.json", "nests deeper"],
        ),
        (
            "until",
            set(
                "until",
                one.clone(),
                "{{ range until 1000000000 }}x{{ end }}",
                true,
            ),
            vec!["metadata.name", "1000000000"],
        ),
        (
            "ranges",
            set(
                "ranges",
                one.clone(),
                "{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}x",
                true,
            ),
            vec!["metadata.name", "steps"],
        ),
        (
            "badname",
            set("badname", list, "{{name}}", false),
            vec!["metadata.name", "Bad_Name!"],
        ),
        (
            "plugin-hang",
            set("plugin-hang", plugin(plugin_hang), "{{name}}", false),
            vec!["plugin", "hostile-agen-hang"],
        ),
        (
            "plugin-garbage",
            set("plugin-garbage", plugin(plugin_garbage), "{{name}}", false),
            vec!["plugin", "not a getparams.execute response"],
        ),
        (
            "scm-500",
            set("scm-500", scm(five_hundred), "{{repository}}", false),
            vec!["Gitea", "500", "<token>"],
        ),
        (
            "scm-slow",
            set("scm-slow", scm(slow), "{{repository}}", false),
            vec!["Gitea", "no complete answer within"],
        ),
    ]
}

/// `plumb appset generate FILE -o json` in core mode; killed (and the test failed) past
/// [`BOUND`]. Returns the exit code and stderr.
fn generate(ns: &str, file: &Path) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["appset", "generate"])
        .arg(file)
        .args(["-o", "json", "--core", "-N", ns])
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > BOUND {
            let _ = child.kill();
            panic!("{}: still running after {BOUND:?}", file.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// The plugin ConfigMaps and the token Secret in `ns`.
fn plugin_objects(ns: &str) {
    kubectl_apply(&json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "hostile-agen-token", "namespace": ns},
        "stringData": {"token": TOKEN}
    }));
    for (name, answer) in [
        ("hostile-agen-hang", serve(Duration::ZERO, |_| None)),
        (
            "hostile-agen-garbage",
            serve(Duration::ZERO, |_| {
                Some(http("200 OK", "<html>not json</html>"))
            }),
        ),
    ] {
        kubectl_apply(&json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns},
            "data": {"baseUrl": answer, "token": "$hostile-agen-token:token"}
        }));
    }
}

#[test]
fn hostile_generator_input_is_refused_by_name_in_bounded_time() {
    env().ensure_applicationset_crd();
    let ns = env().namespace("hostile-agen");
    let ns = ns.name();
    plugin_objects(ns);
    let repos = hostile_repos();
    let dir = tempfile::tempdir().unwrap();
    let cases = cases(&repos, "hostile-agen-hang", "hostile-agen-garbage");
    // One thread each: the hanging and slow ones wait out the HTTP timeout together.
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .map(|(name, set, _)| {
                let file = dir.path().join(format!("{name}.json"));
                std::fs::write(&file, set.to_string()).unwrap();
                s.spawn(move || generate(ns, &file))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut wrong = Vec::new();
    for ((name, _, says), (code, stdout, stderr)) in cases.iter().zip(results) {
        // An error exit, not success and not a panic's 101 (nor a signal's None).
        let mut ok = matches!(code, Some(c) if c != 0 && c != 101) && !stderr.contains("panicked");
        // The file, and the generator by its place in the set.
        ok &= stderr.contains(&format!("{name}.json")) && stderr.contains("spec.generators[0]");
        ok &= says.iter().all(|want| stderr.contains(want));
        ok &= [TOKEN, "root:"]
            .iter()
            .all(|leak| !stdout.contains(leak) && !stderr.contains(leak));
        if !ok {
            wrong.push(format!(
                "{name} (exit {code:?}, wants {says:?}):\n{stdout}\n{stderr}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
