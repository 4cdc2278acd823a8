//! The function table: Go's builtins, sprig v3.3.0's GenericFuncMap as Argo CD v3.6.1 trims it,
//! and Argo's own functions. Sprig is Go code, so it is rewritten here function by function.

mod args;
mod builtins;
mod cases;
mod collections;
mod encoding;
mod math;
mod strings;
pub(crate) mod time;

use std::collections::HashMap;
use std::sync::LazyLock;

use args::FuncDef;
pub(crate) use args::call_ext;

use crate::value::Value;

/// Names handled by the executor itself (lazy arguments or access to the template).
const SPECIAL: &[&str] = &["and", "or", "tpl"];

/// Sprig v3.3.0 functions Argo CD's templates have but this crate does not: a template using one
/// is refused at parse time ("function ... not defined"), never rendered differently. (`env`,
/// `expandenv` and `getHostByName` are refused the same way, as Argo refuses them.)
pub const NOT_IMPLEMENTED: &[&str] = &[
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "shuffle",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "must_date_modify",
    "durationRound",
    "typeIsLike",
    "urlParse",
    "urlJoin",
    "b32dec",
];

static TABLE: LazyLock<HashMap<&'static str, FuncDef>> = LazyLock::new(|| {
    let mut t = HashMap::new();
    builtins::register(&mut t);
    strings::register(&mut t);
    collections::register(&mut t);
    math::register(&mut t);
    encoding::register(&mut t);
    time::register(&mut t);
    t
});

pub(crate) fn builtin(name: &str) -> Option<&'static FuncDef> {
    TABLE.get(name)
}

pub(crate) fn is_defined(name: &str) -> bool {
    SPECIAL.contains(&name) || TABLE.contains_key(name)
}

/// Fields of a `*semver.Version` a template may read (`(semver "1.2.3").Major`).
pub(crate) fn semver_field(v: &semver::Version, name: &str) -> Option<Value> {
    Some(match name {
        "Major" => Value::Int(v.major as i64),
        "Minor" => Value::Int(v.minor as i64),
        "Patch" => Value::Int(v.patch as i64),
        "Prerelease" => Value::str(v.pre.as_str()),
        "Metadata" => Value::str(v.build.as_str()),
        "Original" | "String" => Value::str(v.to_string()),
        _ => return None,
    })
}
