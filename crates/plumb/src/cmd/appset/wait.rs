//! `plumb appset create --wait` and `delete --wait` (Argo's flags): polling the set (and the
//! Applications it owned) through the same client as the command, so they work over the
//! kubeconfig and through `plumb server` alike. Argo waits without a limit; Plumb's `--timeout`
//! bounds the wait (0: none, as Argo).

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use plumb_model::applicationset::ApplicationSet;

use super::client::Ctx;

/// How often the set is read again while waiting.
const POLL: Duration = Duration::from_secs(1);

/// When a wait of `timeout_secs` (0: none) gives up.
pub struct Deadline(Option<Instant>);

impl Deadline {
    pub fn after(timeout_secs: u64) -> Self {
        Self((timeout_secs > 0).then(|| Instant::now() + Duration::from_secs(timeout_secs)))
    }

    fn passed(&self) -> bool {
        self.0.is_some_and(|d| Instant::now() >= d)
    }
}

/// Argo's `isApplicationSetResourcesUpToDate`: the `ResourcesUpToDate` condition is `True`.
fn up_to_date(set: &ApplicationSet) -> bool {
    set.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .find(|c| c.r#type == "ResourcesUpToDate")
        .is_some_and(|c| c.status == "True")
}

/// The conditions of `set` that say why it is not up to date (`Type: message`), for the
/// timeout's message.
fn conditions(set: &ApplicationSet) -> String {
    let lines: Vec<String> = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .map(|c| format!("{} {}: {}", c.r#type, c.status, c.message))
        .collect();
    if lines.is_empty() {
        "no conditions yet (is the ApplicationSet controller running?)".into()
    } else {
        lines.join("; ")
    }
}

/// Waits until the set `name` of `ns` is `ResourcesUpToDate` (Argo's `create --wait`).
pub async fn until_up_to_date(
    ctx: &Ctx,
    ns: Option<&str>,
    name: &str,
    deadline: &Deadline,
    timeout_secs: u64,
) -> Result<()> {
    loop {
        let Some(set) = ctx.client.get_opt(ns, ctx.file_ns(), name).await? else {
            bail!("ApplicationSet \"{name}\" was deleted before reaching ResourcesUpToDate");
        };
        if up_to_date(&set) {
            return Ok(());
        }
        if deadline.passed() {
            bail!(
                "timed out after {timeout_secs}s waiting for ApplicationSet '{name}' to be ResourcesUpToDate: {}",
                conditions(&set)
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until the set `name` of `ns` is gone, then the Applications it owned (`owned`,
/// `namespace/name`) too: the garbage collector deletes them after the set, and each goes
/// once its finalizer (the deletion of its resources) is done.
pub async fn until_deleted(
    ctx: &Ctx,
    ns: Option<&str>,
    name: &str,
    owned: &[(String, String)],
    deadline: &Deadline,
    timeout_secs: u64,
) -> Result<()> {
    while ctx.client.get_opt(ns, ctx.file_ns(), name).await?.is_some() {
        if deadline.passed() {
            bail!(
                "timed out after {timeout_secs}s waiting for ApplicationSet '{name}' to be deleted (a finalizer may hold it)"
            );
        }
        tokio::time::sleep(POLL).await;
    }
    loop {
        let mut left = Vec::new();
        for (app_ns, app) in owned {
            if ctx.client.app_exists(app_ns, app).await? {
                left.push(format!("{app_ns}/{app}"));
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        if deadline.passed() {
            bail!(
                "timed out after {timeout_secs}s waiting for the Applications of ApplicationSet '{name}' to be deleted: {} still exist",
                left.join(", ")
            );
        }
        tokio::time::sleep(POLL).await;
    }
}
