//! The two ways `plumb appset` reaches ApplicationSets: the kubeconfig (core mode, through
//! `plumb_appset::api`, the functions `plumb server` runs) or `plumb server`'s REST API (Argo's
//! `ApplicationSetService` paths).

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use kube::api::{Api, DynamicObject, ListParams};
use plumb_appset::api::{self, Confirm};
use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;
use serde_json::{Value, json};

use super::file::SetFile;
use crate::cmd::app::ConnArgs;
use crate::cmd::remote::{ServerClient, enc};

/// What a create did (Argo's `created`, `unchanged`, `updated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Created,
    Unchanged,
    Updated,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Unchanged => "unchanged",
            Self::Updated => "updated",
        }
    }
}

pub struct Core {
    client: kube::Client,
    control_namespace: String,
    cache_dir: PathBuf,
}

pub enum AppsetClient {
    Core(Box<Core>),
    Server(ServerClient),
}

/// `ns/name` or `name` (in `default_ns`).
pub fn split_name<'a>(
    qualified: &'a str,
    default_ns: Option<&'a str>,
) -> (Option<&'a str>, &'a str) {
    match qualified.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (default_ns, qualified),
    }
}

fn ns_query(ns: Option<&str>) -> String {
    ns.map(|ns| format!("appsetNamespace={}", enc(ns)))
        .unwrap_or_default()
}

fn read_set(v: Value) -> Result<ApplicationSet> {
    serde_json::from_value(v).context("reading the ApplicationSet the server answered")
}

impl AppsetClient {
    /// Core mode over the kubeconfig of `conn`.
    pub async fn connect(conn: &ConnArgs) -> Result<Self> {
        let source = plumb_kube::KubeconfigSource::from_option(conn.kubeconfig.as_deref());
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        Ok(Self::Core(Box::new(Core {
            client,
            control_namespace: conn.control_namespace().to_string(),
            cache_dir: crate::cmd::cache_root()?.join("appset"),
        })))
    }

    fn sets(core: &Core, ns: &str) -> Api<DynamicObject> {
        Api::namespaced_with(core.client.clone(), ns, &api::applicationset_resource())
    }

    /// ApplicationSets of `ns` (core mode: `default_ns`; server: the server's default),
    /// filtered by label `selector` and `projects`, sorted by name.
    pub async fn list(
        &self,
        ns: Option<&str>,
        default_ns: &str,
        selector: Option<&str>,
        projects: &[String],
    ) -> Result<Vec<ApplicationSet>> {
        let mut sets = match self {
            Self::Server(s) => {
                let mut query = vec![ns_query(ns)];
                query.extend(selector.map(|l| format!("selector={}", enc(l))));
                query.extend(projects.iter().map(|p| format!("projects={}", enc(p))));
                query.retain(|q| !q.is_empty());
                let v = s
                    .get(&format!("/api/v1/applicationsets?{}", query.join("&")))
                    .await?;
                let items = v
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                return items.into_iter().map(read_set).collect();
            }
            Self::Core(core) => {
                let ns = ns.unwrap_or(default_ns);
                let listed = Self::sets(core, ns)
                    .list(&ListParams::default().labels(selector.unwrap_or_default()))
                    .await
                    .with_context(|| format!("listing ApplicationSets in namespace {ns}"))?;
                listed
                    .items
                    .iter()
                    .map(api::to_set)
                    .collect::<Result<Vec<_>, _>>()?
            }
        };
        sets.retain(|s| projects.is_empty() || projects.iter().any(|p| p == api::project(s)));
        sets.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(sets)
    }

    /// The ApplicationSet `name` of `ns`, if it exists.
    pub async fn get_opt(
        &self,
        ns: Option<&str>,
        default_ns: &str,
        name: &str,
    ) -> Result<Option<ApplicationSet>> {
        match self {
            Self::Server(s) => {
                let path = format!("/api/v1/applicationsets/{}?{}", enc(name), ns_query(ns));
                let (status, v) = s.call(reqwest::Method::GET, &path, None).await?;
                match status {
                    200 => read_set(v).map(Some),
                    404 => Ok(None),
                    _ => Err(s.error(status, &v)),
                }
            }
            Self::Core(core) => {
                Ok(api::get(&Self::sets(core, ns.unwrap_or(default_ns)), name).await?)
            }
        }
    }

    /// The ApplicationSet `name`, or Argo's not-found error.
    pub async fn get(
        &self,
        ns: Option<&str>,
        default_ns: &str,
        name: &str,
    ) -> Result<ApplicationSet> {
        self.get_opt(ns, default_ns, name).await?.ok_or_else(|| {
            anyhow!(
                "error getting ApplicationSet: applicationsets.argoproj.io \"{name}\" not found"
            )
        })
    }

    /// Creates `file`'s set (or, with `upsert`, updates it; with `dry_run`, only generates).
    pub async fn create(
        &self,
        file: &SetFile,
        upsert: bool,
        dry_run: bool,
    ) -> Result<(ApplicationSet, Action)> {
        let set = &file.set;
        let ns = set.metadata.namespace.as_deref();
        let existing = match self {
            // Only to say created, unchanged or updated: a caller who may create but not get
            // is answered by the create itself (Argo's CLI does not read first).
            Self::Server(_) => self.get_opt(ns, "", set.name()).await.ok().flatten(),
            Self::Core(_) => self.get_opt(ns, "", set.name()).await?,
        };
        let created = match self {
            Self::Server(s) => {
                let path = format!("/api/v1/applicationsets?upsert={upsert}&dryRun={dry_run}");
                read_set(s.post(&path, &file.raw).await?)?
            }
            Self::Core(core) => {
                return self
                    .create_core(core, file, existing, upsert, dry_run)
                    .await;
            }
        };
        let action = match &existing {
            None => Action::Created,
            Some(e) if !upsert || api::same_spec(e, &created) => Action::Unchanged,
            Some(_) => Action::Updated,
        };
        Ok((created, action))
    }

    async fn create_core(
        &self,
        core: &Core,
        file: &SetFile,
        existing: Option<ApplicationSet>,
        upsert: bool,
        dry_run: bool,
    ) -> Result<(ApplicationSet, Action)> {
        let mut set = file.set.clone();
        let project = api::validate(&set)?;
        api::validate_generators(&file.raw)?;
        self.check_project(
            core,
            if project.is_empty() {
                "default"
            } else {
                &project
            },
        )
        .await?;
        if dry_run {
            let apps = self.generate(file).await?;
            set.status.get_or_insert_with(Default::default).resources =
                Some(api::dry_run_resources(&apps));
            return Ok((
                set,
                if existing.is_some() {
                    Action::Unchanged
                } else {
                    Action::Created
                },
            ));
        }
        let sets = Self::sets(core, set.namespace());
        match existing {
            None => Ok((api::create(&sets, &set).await?, Action::Created)),
            Some(e) if api::same_spec(&e, &set) => Ok((e, Action::Unchanged)),
            Some(_) if !upsert => {
                bail!("existing ApplicationSet spec is different, use upsert flag to force update")
            }
            Some(e) => Ok((api::update(&sets, e, &set, true).await?, Action::Updated)),
        }
    }

    async fn check_project(&self, core: &Core, project: &str) -> Result<()> {
        let projects: Api<DynamicObject> = Api::namespaced_with(
            core.client.clone(),
            &core.control_namespace,
            &crate::cmd::app::resource("AppProject", "appprojects"),
        );
        let found = projects
            .get_opt(project)
            .await
            .with_context(|| format!("reading AppProject {}/{project}", core.control_namespace))?;
        if found.is_none() {
            bail!("ApplicationSet references project {project} which does not exist");
        }
        Ok(())
    }

    /// Deletes the ApplicationSet `name` of `ns`.
    pub async fn delete(&self, ns: Option<&str>, default_ns: &str, name: &str) -> Result<()> {
        match self {
            Self::Server(s) => {
                s.delete(&format!(
                    "/api/v1/applicationsets/{}?{}",
                    enc(name),
                    ns_query(ns)
                ))
                .await?;
            }
            Self::Core(core) => {
                let sets = Self::sets(core, ns.unwrap_or(default_ns));
                if api::get(&sets, name).await?.is_none() {
                    bail!(
                        "error getting ApplicationSets: applicationsets.argoproj.io \"{name}\" not found"
                    );
                }
                api::delete(&sets, name).await?;
            }
        }
        Ok(())
    }

    /// The Applications `file`'s set generates (core mode: here, with the kubeconfig's rights;
    /// server mode: the server's generate route). A generator error is an error naming it.
    pub async fn generate(&self, file: &SetFile) -> Result<Vec<Application>> {
        match self {
            Self::Server(s) => {
                let v = s
                    .post(
                        "/api/v1/applicationsets/generate",
                        &json!({"applicationSet": file.raw}),
                    )
                    .await?;
                let apps = v
                    .get("applications")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                apps.into_iter()
                    .map(|a| serde_json::from_value(a).context("reading a generated Application"))
                    .collect()
            }
            Self::Core(core) => {
                let ctx = api::preview_context(
                    core.client.clone(),
                    &core.control_namespace,
                    &core.cache_dir,
                )
                .await?;
                api::load_repositories(&ctx).await?;
                let out = plumb_appset::generate(&file.set, &ctx).await;
                if !out.errors.is_empty() {
                    let errors: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
                    bail!(
                        "{}: unable to generate Applications: {}",
                        file.origin,
                        errors.join("; ")
                    );
                }
                Ok(out.applications)
            }
        }
    }

    /// The Applications `set` owns in the cluster and the deletions the brake holds. A set not
    /// in the cluster owns nothing.
    pub async fn owned(&self, set: &ApplicationSet) -> Result<(Vec<Value>, Vec<String>)> {
        match self {
            Self::Server(s) => {
                let path = format!(
                    "/api/v1/applicationsets/{}/applications?{}",
                    enc(set.name()),
                    ns_query(Some(set.namespace()).filter(|n| !n.is_empty()))
                );
                let (status, v) = s.call(reqwest::Method::GET, &path, None).await?;
                match status {
                    200 => {}
                    404 => return Ok((Vec::new(), Vec::new())),
                    _ => return Err(s.error(status, &v)),
                }
                let items = v
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let pending =
                    serde_json::from_value(v.get("pendingDeletions").cloned().unwrap_or(json!([])))
                        .context("reading pendingDeletions")?;
                Ok((items, pending))
            }
            Self::Core(core) => {
                let Some(live) = api::get(&Self::sets(core, set.namespace()), set.name()).await?
                else {
                    return Ok((Vec::new(), Vec::new()));
                };
                let owned = api::owned_applications(&core.client, &live).await?;
                let pending = api::pending_deletions(&live, &owned);
                Ok((owned, pending))
            }
        }
    }

    /// Whether the Application `name` of `ns` exists (through the server: one the caller may
    /// get; a 403 answers as Argo hides Applications, so it counts as gone).
    pub async fn app_exists(&self, ns: &str, name: &str) -> Result<bool> {
        match self {
            Self::Server(s) => {
                let path = format!(
                    "/api/v1/applications/{}?appNamespace={}",
                    enc(name),
                    enc(ns)
                );
                let (status, v) = s.call(reqwest::Method::GET, &path, None).await?;
                match status {
                    200 => Ok(true),
                    403 | 404 => Ok(false),
                    _ => Err(s.error(status, &v)),
                }
            }
            Self::Core(core) => {
                let apps: Api<DynamicObject> =
                    Api::namespaced_with(core.client.clone(), ns, &api::application_resource());
                let found = apps
                    .get_opt(name)
                    .await
                    .with_context(|| format!("reading Application {ns}/{name}"))?;
                Ok(found.is_some())
            }
        }
    }

    /// Writes the brake's confirmation on the set `name` of `ns`.
    pub async fn confirm(
        &self,
        ns: Option<&str>,
        default_ns: &str,
        name: &str,
        confirm: &Confirm,
    ) -> Result<ApplicationSet> {
        match self {
            Self::Server(s) => {
                let body = match confirm {
                    Confirm::All => json!({"all": true, "appsetNamespace": ns}),
                    Confirm::Apps(apps) => json!({"applications": apps, "appsetNamespace": ns}),
                };
                read_set(
                    s.post(
                        &format!("/api/v1/applicationsets/{}/confirm-deletion", enc(name)),
                        &body,
                    )
                    .await?,
                )
            }
            Self::Core(core) => Ok(api::confirm_deletion(
                &Self::sets(core, ns.unwrap_or(default_ns)),
                name,
                confirm,
            )
            .await?),
        }
    }
}

/// What every subcommand needs: the client and the namespaces.
pub struct Ctx {
    pub(super) client: AppsetClient,
    /// Core mode: `-N` (the namespace of ApplicationSets named without one); server: none.
    pub(super) default_ns: Option<String>,
    /// `-N` when not the default, for the server's `appsetNamespace`.
    pub(super) explicit_ns: Option<String>,
}

impl Ctx {
    /// The namespace to ask for a set named `qualified` (`ns/name` names its own).
    pub(super) fn target<'a>(&'a self, qualified: &'a str) -> (Option<&'a str>, &'a str) {
        let default = match &self.client {
            AppsetClient::Server(_) => self.explicit_ns.as_deref(),
            AppsetClient::Core(_) => self.default_ns.as_deref(),
        };
        split_name(qualified, default)
    }

    /// The namespace of a set from a file that names none.
    pub(super) fn file_ns(&self) -> &str {
        self.explicit_ns
            .as_deref()
            .or(self.default_ns.as_deref())
            .unwrap_or_default()
    }
}
