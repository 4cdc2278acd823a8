//! Jsonnet in a directory source: extVars, TLAs, libs, imports, errors.

use plumb_model::application::{DirectorySource, JsonnetSource, JsonnetVar};
use plumb_source::Error;
use plumb_testenv::git::GitRepo;

use crate::support::*;

fn var(name: &str, value: &str, code: bool) -> JsonnetVar {
    JsonnetVar {
        name: name.into(),
        value: value.into(),
        code: Some(code),
    }
}

#[test]
fn ext_vars_tlas_and_libs() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("vendor/k.libsonnet", "{ configMap(name, data):: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name }, data: data } }\n"),
            ("app/lib/labels.libsonnet", "{ team: 'payments' }\n"),
            (
                "app/main.jsonnet",
                "local k = import 'k.libsonnet';\nlocal labels = import 'lib/labels.libsonnet';\n\
                 function(replicas=1, tier='web') [\n  k.configMap('env-' + std.extVar('env'), { replicas: std.toString(replicas), tier: tier, team: labels.team, region: std.extVar('region').name }),\n  { apiVersion: 'v1', kind: 'List', items: [ k.configMap('from-list', {}) ] },\n]\n",
            ),
            ("app/plain.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n"),
        ],
        "jsonnet",
    );
    let mut s = source(&repo.url(), "app", "main");
    s.directory = Some(DirectorySource {
        jsonnet: Some(JsonnetSource {
            ext_vars: Some(vec![
                var("env", "prod", false),
                var("region", "{ name: 'eu-west-1' }", true),
            ]),
            tlas: Some(vec![var("replicas", "3", true), var("tier", "api", false)]),
            libs: Some(vec!["vendor".into()]),
        }),
        ..Default::default()
    });
    let (r, _d) = renderer();
    let out = r.render(&request(vec![s])).unwrap();
    assert_eq!(
        keys(&out),
        [
            "/ConfigMap//env-prod",
            "/ConfigMap//from-list",
            "/ConfigMap//plain"
        ]
    );
    let data = &out.manifests[0].object["data"];
    assert_eq!(data["replicas"], "3");
    assert_eq!(data["tier"], "api");
    assert_eq!(data["team"], "payments");
    assert_eq!(data["region"], "eu-west-1");
    assert_eq!(out.manifests[0].file, "app/main.jsonnet");
    assert_eq!(out.manifests[1].index, 1);
}

#[test]
fn errors_name_the_file_and_line() {
    let repo = GitRepo::new();
    repo.commit(&[("app/bad.jsonnet", "{\n  apiVersion: 'v1',\n  kind: error 'kind is not set for ' + std.extVar('env'),\n}\n")], "bad");
    let mut s = source(&repo.url(), "app", "main");
    s.directory = Some(DirectorySource {
        jsonnet: Some(JsonnetSource {
            ext_vars: Some(vec![var("env", "prod", false)]),
            ..Default::default()
        }),
        ..Default::default()
    });
    let (r, _d) = renderer();
    let err = r.render(&request(vec![s])).unwrap_err();
    assert!(matches!(err, Error::Jsonnet { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("app/bad.jsonnet:3"), "{text}");
    assert!(text.contains("kind is not set for prod"), "{text}");
}
