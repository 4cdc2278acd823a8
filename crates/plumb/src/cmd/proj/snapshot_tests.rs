//! Snapshot tests of the `plumb proj` layouts, rendered from AppProjects as `kubectl get -o
//! json` returns them (`tests/fixtures/project-*.json`).

use jiff::Timestamp;
use plumb_model::application::AppProject;

use super::detail_format::DetailFormat;
use super::{list, windows};
use crate::output::project::{ScopedView, project_detail};
use crate::snapshot::{check, fixture};

fn projects() -> Vec<AppProject> {
    vec![
        fixture("project-billing.json"),
        fixture("project-default.json"),
        fixture("project-payments.json"),
    ]
}

#[test]
fn list_layouts() {
    let p = projects();
    check(
        "proj-list-wide.txt",
        &list::render(&p, list::ListFormat::Wide).unwrap(),
    );
    check(
        "proj-list-name.txt",
        &list::render(&p, list::ListFormat::Name).unwrap(),
    );
}

#[test]
fn get_layouts() {
    let payments: AppProject = fixture("project-payments.json");
    let scoped = ScopedView {
        repositories: Some(vec![
            "https://git.acme.internal/apps/payments.git".into(),
            "https://charts.acme.internal".into(),
        ]),
        clusters: Some(vec!["https://10.20.0.1:6443".into()]),
    };
    let mut out = project_detail(&payments, &scoped);
    out.push_str("---\n");
    let default: AppProject = fixture("project-default.json");
    out.push_str(&project_detail(&default, &ScopedView::default()));
    out.push_str("---\n");
    let billing: AppProject = fixture("project-billing.json");
    out.push_str(&project_detail(
        &billing,
        &ScopedView {
            repositories: Some(vec![]),
            clusters: Some(vec![]),
        },
    ));
    check("proj-get.txt", &out);
}

/// At 10:16 UTC on Monday 2026-07-20 the 10:00 UTC deny window is open and it is 06:16 in New
/// York; the last window's schedule is broken.
#[test]
fn windows_list_layouts() {
    let payments: AppProject = fixture("project-payments.json");
    let now: Timestamp = "2026-07-20T10:16:00Z".parse().unwrap();
    let (text, errors) =
        windows::render(payments.spec.sync_windows.as_ref(), DetailFormat::Wide, now).unwrap();
    check("proj-windows-payments.txt", &text);
    assert_eq!(
        errors,
        [
            "sync window 3 (deny:0 25 * * *:1h): cannot parse schedule '0 25 * * *': \
          hour field '25': end of range (25) above maximum (23): 25"
        ]
    );
    // At 14:00 UTC (10:00 in New York) the allow window is open, the deny window closed.
    let (statuses, _) = windows::statuses(
        payments.spec.sync_windows.as_deref().unwrap(),
        "2026-07-20T14:00:00Z".parse().unwrap(),
    );
    assert_eq!(statuses, ["Inactive", "Active", "Inactive", "Invalid"]);
    let (yaml, errors) =
        windows::render(payments.spec.sync_windows.as_ref(), DetailFormat::Yaml, now).unwrap();
    assert!(errors.is_empty());
    check("proj-windows-payments.yaml", &yaml);
    let (empty, _) = windows::render(None, DetailFormat::Wide, now).unwrap();
    assert_eq!(
        empty,
        "ID  STATUS  KIND  SCHEDULE  DURATION  APPLICATIONS  NAMESPACES  CLUSTERS  MANUALSYNC  \
         SYNCOVERRUN  TIMEZONE  USEANDOPERATOR  \n"
    );
    assert_eq!(
        windows::render(None, DetailFormat::Json, now).unwrap().0,
        "null\n"
    );
}
