//! The contract test: Argo's own .proto files, read from the argo-cd Go module with protox,
//! pruned to what the served methods reach, compared field by field with the checked-in
//! descriptors (`argo.binpb`), and each served method's REST rule with Argo's `google.api.http`
//! annotation. `PLUMB_GRPC_WRITE_CONTRACT=1` writes `argo.binpb` from Argo's files instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use prost_reflect::prost::Message as _;
use prost_reflect::prost_types::{
    DescriptorProto, FileDescriptorProto, FileDescriptorSet, MessageOptions,
};
use prost_reflect::{DescriptorPool, Kind, MessageDescriptor, Value};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use super::served::SERVED;

const ARGO_MODULE: &str = "github.com/argoproj/argo-cd/v3";
const ARGO_VERSION: &str = "v3.6.1";

/// Go's module cache.
fn module_cache() -> PathBuf {
    std::env::var_os("GOMODCACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join("go/pkg/mod")))
        .unwrap_or_else(|| PathBuf::from("/root/go/pkg/mod"))
}

/// The version argo-cd's go.mod pins `module` to (its replace line wins: it comes last).
fn pinned(go_mod: &str, module: &str) -> Option<String> {
    go_mod
        .lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().rposition(|w| *w == module)?;
            words
                .get(at + 1)
                .filter(|v| v.starts_with('v'))
                .map(|v| v.to_string())
        })
        .next_back()
}

/// Import paths to directories of the module cache, as Argo's hack/generate-proto.sh lays them.
struct GoModules(Vec<(String, PathBuf)>);

impl FileResolver for GoModules {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        for (prefix, dir) in &self.0 {
            if let Some(rest) = name.strip_prefix(prefix.as_str()) {
                let path = dir.join(rest);
                if path.is_file() {
                    return File::open(name, &path);
                }
            }
        }
        Err(protox::Error::file_not_found(name))
    }
}

/// Argo's module directory and the resolver, or why not (the module is not downloaded).
fn argo_sources() -> Result<(PathBuf, ChainFileResolver), String> {
    let cache = module_cache();
    let argo = cache.join(format!("{ARGO_MODULE}@{ARGO_VERSION}"));
    let go_mod = std::fs::read_to_string(argo.join("go.mod")).map_err(|e| {
        format!(
            "{}: {e} (run scripts/argocd build)",
            argo.join("go.mod").display()
        )
    })?;
    let module = |m: &str| -> Result<PathBuf, String> {
        let v = pinned(&go_mod, m).ok_or_else(|| format!("{m} is not in argo-cd's go.mod"))?;
        Ok(cache.join(format!("{m}@{v}")))
    };
    let mut dirs = vec![(format!("{ARGO_MODULE}/"), argo.clone())];
    for m in [
        "k8s.io/api",
        "k8s.io/apimachinery",
        "k8s.io/apiextensions-apiserver",
    ] {
        dirs.push((format!("{m}/"), module(m)?));
    }
    let gogo = module("github.com/gogo/protobuf")?;
    dirs.push(("gogoproto/".into(), gogo.join("gogoproto")));
    dirs.push(("github.com/gogo/protobuf/".into(), gogo));
    let gateway = module("github.com/grpc-ecosystem/grpc-gateway")?;
    dirs.push((
        "google/api/".into(),
        gateway.join("third_party/googleapis/google/api"),
    ));
    let mut chain = ChainFileResolver::new();
    chain.add(GoModules(dirs));
    chain.add(GoogleFileResolver::new());
    Ok((argo, chain))
}

/// Argo's files of the served services, compiled.
fn compile_argo() -> Result<(FileDescriptorSet, DescriptorPool), String> {
    let (argo, resolver) = argo_sources()?;
    // Every service file (a package is not always its directory: settings.proto is `cluster`).
    let server = argo.join("server");
    let mut files = BTreeSet::new();
    for dir in std::fs::read_dir(&server).map_err(|e| format!("{}: {e}", server.display()))? {
        let dir = dir.map_err(|e| e.to_string())?.file_name();
        let dir = dir.to_string_lossy();
        if server.join(&*dir).join(format!("{dir}.proto")).is_file() {
            files.insert(format!("{ARGO_MODULE}/server/{dir}/{dir}.proto"));
        }
    }
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    compiler
        .open_files(&files)
        .map_err(|e| format!("compiling Argo's protos: {e}"))?;
    Ok((compiler.file_descriptor_set(), compiler.descriptor_pool()))
}

/// The messages and enums the served methods reach (a nested type brings its parent).
fn reachable(pool: &DescriptorPool) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut work: Vec<MessageDescriptor> = Vec::new();
    for s in SERVED {
        let (service, method) = s.path[1..].split_once('/').expect("served path");
        let m = pool
            .get_service_by_name(service)
            .and_then(|sv| sv.methods().find(|m| m.name() == method))
            .unwrap_or_else(|| panic!("Argo has no {}", s.path));
        work.push(m.input());
        work.push(m.output());
    }
    while let Some(m) = work.pop() {
        if !seen.insert(m.full_name().to_string()) {
            continue;
        }
        work.extend(m.parent_message());
        for f in m.fields() {
            match f.kind() {
                Kind::Message(inner) => work.push(inner),
                Kind::Enum(e) => {
                    seen.insert(e.full_name().to_string());
                    work.extend(e.parent_message());
                }
                _ => {}
            }
        }
    }
    seen
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Only reachable messages, no options but `map_entry`.
fn prune_messages(
    msgs: Vec<DescriptorProto>,
    prefix: &str,
    keep: &BTreeSet<String>,
) -> Vec<DescriptorProto> {
    msgs.into_iter()
        .filter_map(|mut m| {
            let full = join(prefix, m.name());
            if !keep.contains(&full) {
                return None;
            }
            m.nested_type = prune_messages(std::mem::take(&mut m.nested_type), &full, keep);
            m.enum_type
                .retain(|e| keep.contains(&join(&full, e.name())));
            for e in &mut m.enum_type {
                e.options = None;
                e.value.iter_mut().for_each(|v| v.options = None);
            }
            m.options = m.options.filter(|o| o.map_entry()).map(|_| MessageOptions {
                map_entry: Some(true),
                ..Default::default()
            });
            m.field.iter_mut().for_each(|f| f.options = None);
            m.oneof_decl.iter_mut().for_each(|o| o.options = None);
            Some(m)
        })
        .collect()
}

/// The type names a file's kept messages and services use.
fn used_types(file: &FileDescriptorProto) -> Vec<String> {
    fn walk(m: &DescriptorProto, out: &mut Vec<String>) {
        out.extend(m.field.iter().filter_map(|f| f.type_name.clone()));
        m.nested_type.iter().for_each(|n| walk(n, out));
    }
    let mut out = Vec::new();
    file.message_type.iter().for_each(|m| walk(m, &mut out));
    for s in &file.service {
        for m in &s.method {
            out.extend(m.input_type.clone());
            out.extend(m.output_type.clone());
        }
    }
    out
}

/// Argo's descriptors pruned to the served methods, as `argo.binpb` holds them.
fn prune(set: FileDescriptorSet, pool: &DescriptorPool) -> FileDescriptorSet {
    let keep = reachable(pool);
    let served: BTreeSet<&str> = SERVED.iter().map(|s| s.path).collect();
    let mut files = Vec::new();
    for mut f in set.file {
        let package = f.package().to_string();
        f.message_type = prune_messages(std::mem::take(&mut f.message_type), &package, &keep);
        f.enum_type
            .retain(|e| keep.contains(&join(&package, e.name())));
        for e in &mut f.enum_type {
            e.options = None;
            e.value.iter_mut().for_each(|v| v.options = None);
        }
        for s in &mut f.service {
            let service = join(&package, s.name());
            s.method
                .retain(|m| served.contains(format!("/{service}/{}", m.name()).as_str()));
            s.method.iter_mut().for_each(|m| m.options = None);
            s.options = None;
        }
        f.service.retain(|s| !s.method.is_empty());
        f.extension.clear();
        f.options = None;
        f.source_code_info = None;
        f.public_dependency.clear();
        f.weak_dependency.clear();
        if f.message_type.is_empty() && f.enum_type.is_empty() && f.service.is_empty() {
            continue;
        }
        let deps: BTreeSet<String> = used_types(&f)
            .iter()
            .map(|t| t.trim_start_matches('.'))
            .filter_map(|t| {
                pool.get_message_by_name(t)
                    .map(|m| m.parent_file().name().to_string())
                    .or_else(|| {
                        pool.get_enum_by_name(t)
                            .map(|e| e.parent_file().name().to_string())
                    })
            })
            .filter(|d| d != f.name())
            .collect();
        f.dependency = deps.into_iter().collect();
        files.push(f);
    }
    FileDescriptorSet { file: files }
}

/// A message's fields as comparable text: number → name, kind, cardinality.
fn fields_of(m: &MessageDescriptor) -> BTreeMap<u32, String> {
    m.fields()
        .map(|f| {
            let kind = match f.kind() {
                Kind::Message(inner) => inner.full_name().to_string(),
                Kind::Enum(e) => e.full_name().to_string(),
                other => format!("{other:?}"),
            };
            (
                f.number(),
                format!(
                    "{} {kind} {:?} map={}",
                    f.name(),
                    f.cardinality(),
                    f.is_map()
                ),
            )
        })
        .collect()
}

/// Every difference between Argo's pruned descriptors and Plumb's, one line each.
fn differences(argo: &DescriptorPool, plumb: &DescriptorPool) -> Vec<String> {
    let mut out = Vec::new();
    let names = |p: &DescriptorPool| -> BTreeSet<String> {
        p.all_messages()
            .map(|m| m.full_name().to_string())
            .collect()
    };
    let (a, b) = (names(argo), names(plumb));
    out.extend(
        a.difference(&b)
            .map(|n| format!("message {n}: missing in Plumb")),
    );
    out.extend(
        b.difference(&a)
            .map(|n| format!("message {n}: not in Argo")),
    );
    for name in a.intersection(&b) {
        let (fa, fb) = (
            fields_of(&argo.get_message_by_name(name).expect("listed")),
            fields_of(&plumb.get_message_by_name(name).expect("listed")),
        );
        for (number, field) in &fa {
            match fb.get(number) {
                Some(other) if other == field => {}
                Some(other) => out.push(format!(
                    "{name} field {number}: Argo {field}, Plumb {other}"
                )),
                None => out.push(format!("{name} field {number} ({field}): missing in Plumb")),
            }
        }
        out.extend(
            fb.iter()
                .filter(|(n, _)| !fa.contains_key(n))
                .map(|(n, f)| format!("{name} field {n} ({f}): not in Argo")),
        );
    }
    for s in SERVED {
        let (service, method) = s.path[1..].split_once('/').expect("served path");
        let sig = |p: &DescriptorPool| {
            p.get_service_by_name(service)
                .and_then(|sv| sv.methods().find(|m| m.name() == method))
                .map(|m| {
                    format!(
                        "{} -> {} client_streaming={} server_streaming={}",
                        m.input().full_name(),
                        m.output().full_name(),
                        m.is_client_streaming(),
                        m.is_server_streaming()
                    )
                })
        };
        if sig(argo) != sig(plumb) {
            out.push(format!(
                "{}: Argo {:?}, Plumb {:?}",
                s.path,
                sig(argo),
                sig(plumb)
            ));
        }
    }
    out
}

/// Argo's `google.api.http` rule of a method as (verb, template, body).
fn http_rule(pool: &DescriptorPool, path: &str) -> Option<(String, String, String)> {
    let ext = pool.get_extension_by_name("google.api.http")?;
    let (service, method) = path[1..].split_once('/')?;
    let m = pool
        .get_service_by_name(service)?
        .methods()
        .find(|m| m.name() == method)?;
    let options = m.options();
    let Value::Message(rule) = options.get_extension(&ext).into_owned() else {
        return None;
    };
    let text = |f: &str| match rule.get_field_by_name(f).as_deref() {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    ["get", "put", "post", "delete", "patch"]
        .iter()
        .find(|v| !text(v).is_empty())
        .map(|v| (v.to_uppercase(), text(v), text("body")))
}

#[test]
fn plumb_serves_argos_contract_field_by_field() {
    let (set, argo_pool) = match compile_argo() {
        Ok(c) => c,
        Err(why) if why.contains("scripts/argocd build") => {
            eprintln!("SKIPPED: Argo's .proto files are not in the Go module cache: {why}");
            return;
        }
        Err(why) => panic!("{why}"),
    };
    let pruned = prune(set, &argo_pool).encode_to_vec();
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/grpc/argo.binpb");
    if std::env::var_os("PLUMB_GRPC_WRITE_CONTRACT").is_some() {
        std::fs::write(&target, &pruned).expect("writing argo.binpb");
    }
    let argo = DescriptorPool::decode(pruned.as_slice()).expect("Argo's pruned descriptors");
    let plumb = DescriptorPool::decode(super::contract::BYTES).expect("Plumb's descriptors");
    let diff = differences(&argo, &plumb);
    assert!(
        diff.is_empty(),
        "Plumb's gRPC contract differs from Argo's (PLUMB_GRPC_WRITE_CONTRACT=1 rewrites {}):\n{}",
        target.display(),
        diff.join("\n")
    );
    for s in SERVED {
        assert!(
            super::contract::method(s.path).expect("pool").is_some(),
            "{}",
            s.path
        );
        let rule = http_rule(&argo_pool, s.path);
        assert_eq!(
            rule,
            Some((
                s.verb.to_string(),
                s.template.to_string(),
                s.body.to_string()
            )),
            "{}: the REST rule differs from Argo's google.api.http",
            s.path
        );
    }
}
