//! Whether the Application, AppProject and ApplicationSet CRDs installed in a cluster are the ones this binary
//! was built with: a judgement over the live `CustomResourceDefinition` object (as `kubectl get
//! crd -o yaml` shows it), so it is tested on real objects without a cluster.
//!
//! Plumb's generated CRDs (`deploy/crds`, [`crate::crd`]) carry two annotations: [`VERSION_KEY`],
//! the Plumb release that wrote them, and [`SCHEMA_KEY`], a SHA-256 of their `spec`. The binary
//! knows its own schema hashes ([`APPLICATION_SCHEMA`], [`APP_PROJECT_SCHEMA`]; plumb-model's
//! tests fail when they no longer match the generated CRDs), so an upgrade that forgot the CRDs
//! is told apart from a current install without comparing schemas the API server may have
//! defaulted. CRDs without the annotations are Argo CD's (or Plumb's from before them); those are
//! reported only where Plumb needs something they lack.

use serde_json::Value;

/// The annotation naming the Plumb release whose `deploy/crds` an installed CRD is.
pub const VERSION_KEY: &str = "plumb.dev/version";
/// The annotation holding `sha256:<hex>` of the CRD's `spec`, as generated.
pub const SCHEMA_KEY: &str = "plumb.dev/schema";
/// The label Plumb's CRDs carry (Argo CD's carry `app.kubernetes.io/part-of: argocd`).
const PART_OF: &str = "app.kubernetes.io/part-of";

/// This binary's release.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// [`SCHEMA_KEY`] of this binary's `applications.argoproj.io`.
pub const APPLICATION_SCHEMA: &str =
    "sha256:8ba6a2503b991625388b34197d2255ac9a6bc674935c85e201db200a4b6e56a0";
/// [`SCHEMA_KEY`] of this binary's `appprojects.argoproj.io`.
pub const APP_PROJECT_SCHEMA: &str =
    "sha256:43aad1f6f79432e2166fa4e3fba57c3b967d6b28a718c1fd650106d6defc170d";

/// [`SCHEMA_KEY`] of this binary's `applicationsets.argoproj.io`.
pub const APPLICATION_SET_SCHEMA: &str = "sha256:0";

/// The CRDs Plumb reads and writes, by name.
pub const CRD_NAMES: [&str; 3] = [
    "applications.argoproj.io",
    "appprojects.argoproj.io",
    "applicationsets.argoproj.io",
];

/// What an installed CRD is, next to this binary's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Exactly the CRD this binary ships.
    Current,
    /// Plumb's CRD from an older release (`installed` is its [`VERSION_KEY`], `None` when it
    /// predates the annotations).
    Older { installed: Option<String> },
    /// Plumb's CRD from a newer release: this binary may drop fields it does not know.
    Newer { installed: String },
    /// Plumb's CRD of the same release with another schema (a development build).
    Differs { installed: String },
    /// Not Plumb's (Argo CD's): usable, Plumb needs nothing it lacks.
    Foreign,
    /// Not Plumb's, and lacking something Plumb needs (named).
    Lacking { need: &'static str },
    /// Not installed at all.
    Missing,
}

impl Verdict {
    /// Whether applying this binary's CRDs is the fix (and the start-up report is an error).
    pub fn needs_apply(&self) -> bool {
        !matches!(self, Self::Current | Self::Foreign | Self::Newer { .. })
    }

    /// One line for the log: what is installed and what to do about it.
    pub fn message(&self, name: &str) -> String {
        let fix = format!(
            "apply the CRDs of Plumb {VERSION}: kubectl apply --server-side --force-conflicts -f deploy/crds/ (or install.yaml)"
        );
        match self {
            Self::Current => format!("CRD {name} is Plumb {VERSION}'s"),
            Self::Older { installed: Some(v) } => format!(
                "CRD {name} is older than this binary (Plumb {v}'s, this is {VERSION}): fields it added are dropped by the API server; {fix}"
            ),
            Self::Older { installed: None } => format!(
                "CRD {name} is older than this binary (Plumb's, from before {VERSION_KEY} annotations): {fix}"
            ),
            Self::Newer { installed } => format!(
                "CRD {name} is newer than this binary (Plumb {installed}'s, this is {VERSION}): fields this binary does not know are kept but not acted on; upgrade plumb"
            ),
            Self::Differs { installed } => format!(
                "CRD {name} has another schema than this binary's although both say Plumb {installed} (a development build?): {fix}"
            ),
            Self::Foreign => format!("CRD {name} is Argo CD's; Plumb works with it"),
            Self::Lacking { need } => {
                format!("CRD {name} is Argo CD's and lacks {need}: {fix}")
            }
            Self::Missing => format!("CRD {name} is not installed: {fix}"),
        }
    }
}

/// This binary's schema annotation for the CRD `name`, if it is one of Plumb's.
pub fn own_schema(name: &str) -> Option<&'static str> {
    match name {
        "applications.argoproj.io" => Some(APPLICATION_SCHEMA),
        "appprojects.argoproj.io" => Some(APP_PROJECT_SCHEMA),
        "applicationsets.argoproj.io" => Some(APPLICATION_SET_SCHEMA),
        _ => None,
    }
}

/// Judges the installed CRD `crd` (the API server's object) against this binary's.
pub fn assess(crd: &Value) -> Verdict {
    let meta = &crd["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    let annotation = |key: &str| meta["annotations"][key].as_str().map(str::to_owned);
    let ours = meta["labels"][PART_OF].as_str() == Some("plumb");
    match (annotation(SCHEMA_KEY), annotation(VERSION_KEY)) {
        (Some(schema), _) if Some(schema.as_str()) == own_schema(name) => Verdict::Current,
        (Some(_), Some(installed)) => match compare_versions(&installed, VERSION) {
            Some(std::cmp::Ordering::Greater) => Verdict::Newer { installed },
            Some(std::cmp::Ordering::Equal) => Verdict::Differs { installed },
            _ => Verdict::Older {
                installed: Some(installed),
            },
        },
        (Some(_), None) => Verdict::Older { installed: None },
        (None, _) if ours => Verdict::Older { installed: None },
        (None, _) => match lacking(name, crd) {
            Some(need) => Verdict::Lacking { need },
            None => Verdict::Foreign,
        },
    }
}

/// What Plumb needs of a CRD it did not write: the controller and the API server write an
/// Application's status through the status subresource (a PATCH of `.../status` answers 404
/// without it, so no Application would ever get a status). Nothing of AppProjects.
fn lacking(name: &str, crd: &Value) -> Option<&'static str> {
    if name != "applications.argoproj.io" {
        return None;
    }
    let versions = crd["spec"]["versions"].as_array()?;
    let storage = versions
        .iter()
        .find(|v| v["name"] == crate::application::VERSION)?;
    storage["subresources"]["status"]
        .is_null()
        .then_some("the status subresource (Plumb writes Application status through it)")
}

/// Orders two `MAJOR.MINOR.PATCH[-pre]` versions by their numbers (a pre-release sorts before
/// its release); `None` when either is not such a version.
fn compare_versions(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    fn parse(v: &str) -> Option<([u64; 3], bool)> {
        let (core, pre) = match v.trim_start_matches('v').split_once('-') {
            Some((c, _)) => (c, true),
            None => (v.trim_start_matches('v'), false),
        };
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        let n = [parts.next()??, parts.next()??, parts.next()??];
        parts.next().is_none().then_some((n, pre))
    }
    let (na, pa) = parse(a)?;
    let (nb, pb) = parse(b)?;
    // A release (no pre-release) is newer than its pre-releases.
    Some(na.cmp(&nb).then(pb.cmp(&pa)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn versions_order_by_number_and_pre_release() {
        assert_eq!(compare_versions("0.1.0", "0.1.0"), Some(Ordering::Equal));
        assert_eq!(compare_versions("0.1.0", "0.2.0"), Some(Ordering::Less));
        assert_eq!(compare_versions("0.10.0", "0.9.3"), Some(Ordering::Greater));
        assert_eq!(compare_versions("v1.0.0", "1.0.0"), Some(Ordering::Equal));
        assert_eq!(
            compare_versions("1.0.0-rc.1", "1.0.0"),
            Some(Ordering::Less)
        );
        assert_eq!(compare_versions("1.0", "1.0.0"), None);
        assert_eq!(compare_versions("1.0.0.0", "1.0.0"), None);
        assert_eq!(compare_versions("one", "1.0.0"), None);
    }

    #[test]
    fn only_stale_or_lacking_crds_need_applying() {
        assert!(!Verdict::Current.needs_apply());
        assert!(!Verdict::Foreign.needs_apply());
        assert!(
            !Verdict::Newer {
                installed: "9.0.0".into()
            }
            .needs_apply()
        );
        assert!(Verdict::Missing.needs_apply());
        assert!(Verdict::Older { installed: None }.needs_apply());
        let message = Verdict::Older {
            installed: Some("0.0.1".into()),
        }
        .message("applications.argoproj.io");
        assert!(
            message.contains("kubectl apply --server-side --force-conflicts -f deploy/crds/"),
            "{message}"
        );
    }
}
