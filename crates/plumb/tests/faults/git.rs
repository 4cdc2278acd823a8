//! The Git server gone, or the tracked revision deleted: the Application's sync status goes
//! Unknown with a ComparisonError condition that says why, nothing is pruned or applied, and
//! when Git is back the status is true again without a new sync.

use crate::*;
use plumb_testenv::git_http::GitHttpServer;

fn comparison_error(app: &Value) -> Option<String> {
    app["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "ComparisonError")
        .and_then(|c| c["message"].as_str())
        .map(str::to_string)
}

#[test]
fn git_server_gone_means_unknown_and_no_prune() {
    let _serial = serial();
    let repo = plumb_testenv::git::GitRepo::named("gone");
    let server = std::cell::RefCell::new(None::<GitHttpServer>);
    let mut s = Steady::with_repo(
        "git-gone",
        "git-gone",
        repo,
        |r| {
            let srv = GitHttpServer::serve(r, None);
            let url = srv.url();
            *server.borrow_mut() = Some(srv);
            url
        },
        "main",
    );
    let port = server.borrow().as_ref().unwrap().port();
    let objects = configmaps(s.dest.name());
    let history = history_len(&s.app());

    // The server goes away (connection refused), and Git meanwhile drops two of the objects:
    // a controller that took "no answer" for "no objects" would prune everything.
    drop(server.borrow_mut().take());
    s.repo.remove(&["app/b.yaml", "app/c.yaml"], "drop two");
    s.refresh(true);
    let app = s
        .ctl
        .wait_app(s.name, "Unknown with a ComparisonError", |a| {
            sync_status(a) == "Unknown" && comparison_error(a).is_some()
        });
    let msg = comparison_error(&app).unwrap();
    assert!(
        msg.contains(&format!("127.0.0.1:{port}")),
        "the condition names the repository: {msg}"
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(
        configmaps(s.dest.name()),
        objects,
        "nothing pruned or written"
    );
    assert_eq!(history_len(&s.app()), history, "no sync without Git");
    s.assert_running();

    // Back on the same port: the drop of two objects is now seen and automated prune acts on
    // it, as it should for a real change in Git.
    let _server = GitHttpServer::serve_on(&s.repo, None, port);
    s.refresh(true);
    let app = s.ctl.wait_app(s.name, "synced after Git came back", |a| {
        synced_healthy(a) && comparison_error(a).is_none() && history_len(a) == history + 1
    });
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let after = configmaps(s.dest.name());
    assert_eq!(after.keys().collect::<Vec<_>>(), ["cm-a"]);
    assert_eq!(after["cm-a"], objects["cm-a"], "cm-a untouched");
}

#[test]
fn a_deleted_revision_means_unknown_and_no_prune() {
    let _serial = serial();
    let repo = plumb_testenv::git::GitRepo::named("deleted");
    let server = std::cell::RefCell::new(None::<GitHttpServer>);
    // The application tracks branch `release`, which is then deleted on the server (as a
    // force-push that removes a branch or rewrites it away would).
    let s = Steady::with_repo(
        "git-deleted",
        "git-deleted",
        repo,
        |r| {
            r.git(&["branch", "release"]);
            let srv = GitHttpServer::serve(r, None);
            let url = srv.url();
            *server.borrow_mut() = Some(srv);
            url
        },
        "release",
    );
    let objects = configmaps(s.dest.name());
    let history = history_len(&s.app());

    s.repo.git(&["branch", "-D", "release"]);
    s.refresh(true);
    let app = s
        .ctl
        .wait_app(s.name, "Unknown with a ComparisonError", |a| {
            sync_status(a) == "Unknown" && comparison_error(a).is_some()
        });
    let msg = comparison_error(&app).unwrap();
    assert!(
        msg.contains("release"),
        "the condition names the revision: {msg}"
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(
        configmaps(s.dest.name()),
        objects,
        "nothing pruned or written"
    );
    assert_eq!(history_len(&s.app()), history);

    // The branch pushed again at the same commit: true again, no sync needed.
    s.repo.git(&["branch", "release"]);
    s.refresh(true);
    let app = s.ctl.wait_app(s.name, "synced again", |a| {
        synced_healthy(a) && comparison_error(a).is_none()
    });
    assert_eq!(history_len(&app), history);
    assert_eq!(configmaps(s.dest.name()), objects);
    drop(server);
}
