//! The methods served over gRPC, each with the REST route that answers it.

/// How a served method reaches the REST router: Argo's `google.api.http` rule for it (the
/// contract test checks each against Argo's .proto files).
#[derive(Debug, Clone, Copy)]
pub struct Served {
    /// `/package.Service/Method`.
    pub path: &'static str,
    /// The HTTP verb, upper case.
    pub verb: &'static str,
    /// The path template, `{field}` and `{field=**}` filled from the request message.
    pub template: &'static str,
    /// `*` (the whole message is the body), a field name, or empty (fields go to the query).
    pub body: &'static str,
}

const fn served(
    path: &'static str,
    verb: &'static str,
    template: &'static str,
    body: &'static str,
) -> Served {
    Served {
        path,
        verb,
        template,
        body,
    }
}

/// Every method served over gRPC; any other is `Unimplemented`.
pub const SERVED: &[Served] = &[
    served("/version.VersionService/Version", "GET", "/api/version", ""),
    served(
        "/cluster.SettingsService/Get",
        "GET",
        "/api/v1/settings",
        "",
    ),
    served(
        "/cluster.SettingsService/GetPlugins",
        "GET",
        "/api/v1/settings/plugins",
        "",
    ),
    served(
        "/session.SessionService/GetUserInfo",
        "GET",
        "/api/v1/session/userinfo",
        "",
    ),
    served(
        "/session.SessionService/Create",
        "POST",
        "/api/v1/session",
        "*",
    ),
    served(
        "/session.SessionService/Delete",
        "DELETE",
        "/api/v1/session",
        "",
    ),
    served(
        "/account.AccountService/CanI",
        "GET",
        "/api/v1/account/can-i/{resource}/{action}/{subresource=**}",
        "",
    ),
    served(
        "/account.AccountService/UpdatePassword",
        "PUT",
        "/api/v1/account/password",
        "*",
    ),
    served(
        "/account.AccountService/ListAccounts",
        "GET",
        "/api/v1/account",
        "",
    ),
    served(
        "/account.AccountService/GetAccount",
        "GET",
        "/api/v1/account/{name}",
        "",
    ),
    served(
        "/account.AccountService/CreateToken",
        "POST",
        "/api/v1/account/{name}/token",
        "*",
    ),
    served(
        "/account.AccountService/DeleteToken",
        "DELETE",
        "/api/v1/account/{name}/token/{id}",
        "",
    ),
    served(
        "/application.ApplicationService/List",
        "GET",
        "/api/v1/applications",
        "",
    ),
    served(
        "/application.ApplicationService/Get",
        "GET",
        "/api/v1/applications/{name}",
        "",
    ),
    served(
        "/application.ApplicationService/ResourceTree",
        "GET",
        "/api/v1/applications/{applicationName}/resource-tree",
        "",
    ),
    served(
        "/application.ApplicationService/ManagedResources",
        "GET",
        "/api/v1/applications/{applicationName}/managed-resources",
        "",
    ),
    served(
        "/project.ProjectService/List",
        "GET",
        "/api/v1/projects",
        "",
    ),
    served(
        "/project.ProjectService/Get",
        "GET",
        "/api/v1/projects/{name}",
        "",
    ),
    served(
        "/project.ProjectService/GetDetailedProject",
        "GET",
        "/api/v1/projects/{name}/detailed",
        "",
    ),
    served(
        "/project.ProjectService/GetSyncWindowsState",
        "GET",
        "/api/v1/projects/{name}/syncwindows",
        "",
    ),
    served(
        "/cluster.ClusterService/List",
        "GET",
        "/api/v1/clusters",
        "",
    ),
    served(
        "/repository.RepositoryService/ListRepositories",
        "GET",
        "/api/v1/repositories",
        "",
    ),
    served(
        "/application.ApplicationService/Create",
        "POST",
        "/api/v1/applications",
        "application",
    ),
    served(
        "/application.ApplicationService/Delete",
        "DELETE",
        "/api/v1/applications/{name}",
        "",
    ),
    served(
        "/application.ApplicationService/Sync",
        "POST",
        "/api/v1/applications/{name}/sync",
        "*",
    ),
    served(
        "/application.ApplicationService/TerminateOperation",
        "DELETE",
        "/api/v1/applications/{name}/operation",
        "",
    ),
];
