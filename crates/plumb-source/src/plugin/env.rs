//! The environment a plugin's commands get, exactly the variables Argo CD's repo-server sends to
//! its cmp-server (`reposerver/repository/repository.go` `newEnv`, `getPluginEnvs`,
//! `getPluginParamEnvs`; `ApplicationSourcePluginParameters.Environ`): our own code, because the
//! names and encodings are Argo's.

use std::collections::BTreeMap;

use plumb_model::application::{PluginParameter, PluginSource};
use serde_json::Value;

/// What the build environment is made of.
#[derive(Debug, Clone, Default)]
pub(crate) struct BuildEnv<'a> {
    pub app_name: &'a str,
    /// The destination namespace (Argo's `ARGOCD_APP_NAMESPACE` is that, not the Application's).
    pub namespace: &'a str,
    pub project: &'a str,
    /// The resolved commit (or chart version).
    pub revision: &'a str,
    pub repo_url: &'a str,
    pub path: &'a str,
    pub target_revision: &'a str,
    pub kube_version: &'a str,
    pub api_versions: &'a [String],
}

/// The variables, in the order Argo CD builds them: the build environment, `KUBE_VERSION`,
/// `KUBE_API_VERSIONS`, `ARGOCD_ENV_<name>` for `plugin.env` (values with `$VAR` of the build
/// environment substituted), `ARGOCD_APP_PARAMETERS` and `PARAM_<NAME>…`.
pub(crate) fn environ(b: &BuildEnv<'_>, plugin: Option<&PluginSource>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("ARGOCD_APP_NAME", b.app_name.to_owned()),
        ("ARGOCD_APP_NAMESPACE", b.namespace.to_owned()),
        ("ARGOCD_APP_PROJECT_NAME", b.project.to_owned()),
        ("ARGOCD_APP_REVISION", b.revision.to_owned()),
        ("ARGOCD_APP_REVISION_SHORT", short(b.revision, 7)),
        ("ARGOCD_APP_REVISION_SHORT_8", short(b.revision, 8)),
        ("ARGOCD_APP_SOURCE_REPO_URL", b.repo_url.to_owned()),
        ("ARGOCD_APP_SOURCE_PATH", b.path.to_owned()),
        (
            "ARGOCD_APP_SOURCE_TARGET_REVISION",
            b.target_revision.to_owned(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let build: BTreeMap<String, String> = env.iter().cloned().collect();
    env.push(("KUBE_VERSION".into(), semver(b.kube_version)));
    env.push(("KUBE_API_VERSIONS".into(), b.api_versions.join(",")));
    let Some(plugin) = plugin else {
        return env;
    };
    for entry in plugin.env.iter().flatten() {
        env.push((
            format!("ARGOCD_ENV_{}", entry.name),
            envsubst(&entry.value, &build),
        ));
    }
    let params = plugin.parameters.as_deref().unwrap_or_default();
    env.push(("ARGOCD_APP_PARAMETERS".into(), parameters_json(params)));
    for p in params {
        let base = format!("PARAM_{}", escaped(p.name.as_deref().unwrap_or_default()));
        if let Some(s) = &p.string {
            env.push((base.clone(), s.clone()));
        }
        for (k, v) in p.map.iter().flatten() {
            env.push((format!("{base}_{}", escaped(k)), v.clone()));
        }
        for (i, v) in p.array.iter().flatten().enumerate() {
            env.push((format!("{base}_{i}"), v.clone()));
        }
    }
    env
}

/// Argo's `shortenRevision`: the first `n` characters of a longer revision.
fn short(revision: &str, n: usize) -> String {
    if revision.len() > n && revision.is_char_boundary(n) {
        revision[..n].to_owned()
    } else {
        revision.to_owned()
    }
}

/// Argo's `text.SemVer`: a version that does not start with `v` gets one.
fn semver(version: &str) -> String {
    if version.is_empty() || version.starts_with('v') {
        version.to_owned()
    } else {
        format!("v{version}")
    }
}

/// `ARGOCD_APP_PARAMETERS`: the parameters as Argo marshals them (each an object with `name` and
/// whichever of `string`, `array`, `map` is set; keys sorted, as Go sorts map keys).
fn parameters_json(params: &[PluginParameter]) -> String {
    let list: Vec<BTreeMap<&str, Value>> = params
        .iter()
        .map(|p| {
            let mut o = BTreeMap::new();
            o.insert("name", Value::String(p.name.clone().unwrap_or_default()));
            if let Some(s) = &p.string {
                o.insert("string", Value::String(s.clone()));
            }
            if let Some(m) = &p.map {
                o.insert(
                    "map",
                    Value::Object(
                        m.iter()
                            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                            .collect(),
                    ),
                );
            }
            if let Some(a) = &p.array {
                o.insert(
                    "array",
                    Value::Array(a.iter().cloned().map(Value::String).collect()),
                );
            }
            o
        })
        .collect();
    serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
}

/// Argo's `escaped`: upper case, anything but `A-Z0-9_` becomes `_`.
fn escaped(name: &str) -> String {
    name.to_uppercase()
        .chars()
        .map(|c| {
            if c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Argo's `Env.Envsubst` (Go's `os.Expand` over the build environment only): `$NAME` and
/// `${NAME}` become the build variable's value or nothing; `$$` is `$`.
fn envsubst(s: &str, vars: &BTreeMap<String, String>) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut plain = 0;
    while i < b.len() {
        if b[i] != b'$' || i + 1 >= b.len() {
            i += 1;
            continue;
        }
        out.push_str(&s[plain..i]);
        let rest = &s[i + 1..];
        let (name, width) = shell_name(rest);
        match name {
            Some("$") => out.push('$'),
            Some(n) if !n.is_empty() => out.push_str(vars.get(n).map_or("", String::as_str)),
            // Valid syntax without a name: the dollar stays.
            Some(_) if width == 0 => out.push('$'),
            // Invalid syntax (`${` unclosed, `${}`): eaten, as Go does.
            _ => {}
        }
        i += 1 + width;
        plain = i;
    }
    out.push_str(&s[plain..]);
    out
}

/// Go's `getShellName`: the name after a `$` and how many bytes it takes.
fn shell_name(s: &str) -> (Option<&str>, usize) {
    let b = s.as_bytes();
    let special = |c: u8| b"*#$@!?-".contains(&c) || c.is_ascii_digit();
    if b.first() == Some(&b'{') {
        if b.len() > 2 && special(b[1]) && b[2] == b'}' {
            return (Some(&s[1..2]), 3);
        }
        return match s[1..].find('}') {
            // `${}` is eaten whole; an unclosed `${` loses only its brace.
            Some(0) => (None, 2),
            None => (None, 1),
            Some(end) => (Some(&s[1..1 + end]), end + 2),
        };
    }
    if let Some(&c) = b.first()
        && special(c)
    {
        return (Some(&s[..1]), 1);
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (Some(&s[..n]), n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_model::application::EnvEntry;

    #[test]
    fn the_environment_is_argos() {
        let b = BuildEnv {
            app_name: "guestbook",
            namespace: "prod",
            project: "team",
            revision: "0123456789abcdef0123456789abcdef01234567",
            repo_url: "https://git.example.com/app.git",
            path: "deploy",
            target_revision: "main",
            kube_version: "1.31.0",
            api_versions: &["v1".into(), "apps/v1".into()],
        };
        let plugin = PluginSource {
            name: None,
            env: Some(vec![
                EnvEntry {
                    name: "FOO".into(),
                    value: "app=$ARGOCD_APP_NAME rev=${ARGOCD_APP_REVISION_SHORT} home=$HOME $$x"
                        .into(),
                },
                EnvEntry {
                    name: "lower".into(),
                    value: "v".into(),
                },
            ]),
            parameters: Some(vec![
                PluginParameter {
                    name: Some("replica-count".into()),
                    string: Some("3".into()),
                    ..Default::default()
                },
                PluginParameter {
                    name: Some("images".into()),
                    array: Some(vec!["a".into(), "b".into()]),
                    ..Default::default()
                },
                PluginParameter {
                    name: Some("labels".into()),
                    map: Some([("team.io/owner".to_owned(), "x".to_owned())].into()),
                    ..Default::default()
                },
            ]),
        };
        let env: BTreeMap<String, String> = environ(&b, Some(&plugin)).into_iter().collect();
        let get = |k: &str| env.get(k).map(String::as_str);
        assert_eq!(get("ARGOCD_APP_NAME"), Some("guestbook"));
        assert_eq!(get("ARGOCD_APP_NAMESPACE"), Some("prod"));
        assert_eq!(get("ARGOCD_APP_PROJECT_NAME"), Some("team"));
        assert_eq!(get("ARGOCD_APP_REVISION_SHORT"), Some("0123456"));
        assert_eq!(get("ARGOCD_APP_REVISION_SHORT_8"), Some("01234567"));
        assert_eq!(get("ARGOCD_APP_SOURCE_PATH"), Some("deploy"));
        assert_eq!(get("ARGOCD_APP_SOURCE_TARGET_REVISION"), Some("main"));
        assert_eq!(get("KUBE_VERSION"), Some("v1.31.0"));
        assert_eq!(get("KUBE_API_VERSIONS"), Some("v1,apps/v1"));
        // Only the build environment is substituted: the controller's $HOME is not.
        assert_eq!(
            get("ARGOCD_ENV_FOO"),
            Some("app=guestbook rev=0123456 home= $x")
        );
        assert_eq!(get("ARGOCD_ENV_lower"), Some("v"));
        assert_eq!(get("PARAM_REPLICA_COUNT"), Some("3"));
        assert_eq!(get("PARAM_IMAGES_0"), Some("a"));
        assert_eq!(get("PARAM_IMAGES_1"), Some("b"));
        assert_eq!(get("PARAM_LABELS_TEAM_IO_OWNER"), Some("x"));
        assert_eq!(
            get("ARGOCD_APP_PARAMETERS"),
            Some(
                r#"[{"name":"replica-count","string":"3"},{"array":["a","b"],"name":"images"},{"map":{"team.io/owner":"x"},"name":"labels"}]"#
            )
        );
    }

    #[test]
    fn envsubst_follows_os_expand() {
        let vars: BTreeMap<String, String> = [("A".to_owned(), "1".to_owned())].into();
        assert_eq!(envsubst("$A-${A}-$B-$", &vars), "1-1--$");
        assert_eq!(envsubst("${A", &vars), "A");
        assert_eq!(envsubst("a$ b", &vars), "a$ b");
        assert_eq!(envsubst("price: $$5", &vars), "price: $5");
    }
}
