//! Plumb's own resource actions for the everyday kinds, written here from the Kubernetes API's
//! documented fields: restarting a workload is what `kubectl rollout restart` does (a new
//! `kubectl.kubernetes.io/restartedAt` annotation on the Pod template), suspending a CronJob sets
//! `spec.suspend`. Argo CD ships actions of the same names; these are used when the settings have
//! none for the kind (or ask to merge the built-ins).

/// `(action name, action.lua)`.
pub(super) type Definition = (&'static str, &'static str);

/// `(group, kind, discovery.lua, definitions)`.
pub(super) const ACTIONS: &[(&str, &str, &str, &[Definition])] = &[
    (
        "apps",
        "Deployment",
        RESTART_DISCOVERY,
        &[("restart", RESTART)],
    ),
    (
        "apps",
        "StatefulSet",
        RESTART_DISCOVERY,
        &[("restart", RESTART)],
    ),
    (
        "apps",
        "DaemonSet",
        RESTART_DISCOVERY,
        &[("restart", RESTART)],
    ),
    (
        "batch",
        "CronJob",
        CRONJOB_DISCOVERY,
        &[("suspend", CRONJOB_SUSPEND), ("resume", CRONJOB_RESUME)],
    ),
];

const RESTART_DISCOVERY: &str = r#"
local actions = {}
actions["restart"] = {["disabled"] = false}
return actions
"#;

/// Stamps the Pod template, so the controller rolls every Pod, as `kubectl rollout restart`.
const RESTART: &str = r#"
local os = require("os")
if obj.spec == nil or obj.spec.template == nil then
  error("the object has no spec.template to restart", 0)
end
local template = obj.spec.template
if template.metadata == nil then
  template.metadata = {}
end
if template.metadata.annotations == nil then
  template.metadata.annotations = {}
end
template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] = os.date("!%Y-%m-%dT%XZ")
return obj
"#;

const CRONJOB_DISCOVERY: &str = r#"
local suspended = obj.spec ~= nil and obj.spec.suspend == true
local actions = {}
actions["suspend"] = {["disabled"] = suspended}
actions["resume"] = {["disabled"] = not suspended}
return actions
"#;

const CRONJOB_SUSPEND: &str = r#"
if obj.spec == nil then
  error("the CronJob has no spec", 0)
end
obj.spec.suspend = true
return obj
"#;

const CRONJOB_RESUME: &str = r#"
if obj.spec == nil then
  error("the CronJob has no spec", 0)
end
obj.spec.suspend = false
return obj
"#;
