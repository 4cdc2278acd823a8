//! Plumb's own resource actions for the everyday kinds, written here from the Kubernetes API's
//! documented fields: restarting a workload is what `kubectl rollout restart` does (a new
//! `kubectl.kubernetes.io/restartedAt` annotation on the Pod template), suspending a CronJob sets
//! `spec.suspend`, pausing a Deployment sets `spec.paused` (what `kubectl rollout pause` does),
//! scaling sets `spec.replicas` from the action's `replicas` parameter (`actionParams`, Argo's
//! parameter contract). Argo CD ships actions of the same names; these are used when the settings
//! and the customizations directories have none for the kind (or the settings ask to merge).

/// `(action name, action.lua)`.
pub(super) type Definition = (&'static str, &'static str);

/// `(group, kind, discovery.lua, definitions)`.
pub(super) const ACTIONS: &[(&str, &str, &str, &[Definition])] = &[
    (
        "apps",
        "Deployment",
        DEPLOYMENT_DISCOVERY,
        &[
            ("restart", RESTART),
            ("pause", DEPLOYMENT_PAUSE),
            ("resume", DEPLOYMENT_RESUME),
            ("scale", SCALE),
        ],
    ),
    (
        "apps",
        "StatefulSet",
        SCALABLE_DISCOVERY,
        &[("restart", RESTART), ("scale", SCALE)],
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

/// Restart always; pause while the rollout runs, resume while it is paused; scale with a
/// `replicas` parameter.
const DEPLOYMENT_DISCOVERY: &str = r#"
local paused = obj.spec ~= nil and obj.spec.paused == true
local actions = {}
actions["restart"] = {["disabled"] = false}
actions["pause"] = {["disabled"] = paused}
actions["resume"] = {["disabled"] = not paused}
actions["scale"] = {["disabled"] = false, ["params"] = {{["name"] = "replicas"}}}
return actions
"#;

const SCALABLE_DISCOVERY: &str = r#"
local actions = {}
actions["restart"] = {["disabled"] = false}
actions["scale"] = {["disabled"] = false, ["params"] = {{["name"] = "replicas"}}}
return actions
"#;

const DEPLOYMENT_PAUSE: &str = r#"
if obj.spec == nil then
  error("the Deployment has no spec", 0)
end
obj.spec.paused = true
return obj
"#;

const DEPLOYMENT_RESUME: &str = r#"
if obj.spec == nil then
  error("the Deployment has no spec", 0)
end
obj.spec.paused = nil
return obj
"#;

/// `replicas` must be a whole number of at least 0 (the API server would refuse anything else).
const SCALE: &str = r#"
local given = actionParams["replicas"]
if given == nil then
  error("the scale action needs the parameter replicas", 0)
end
local replicas = tonumber(given)
if replicas == nil or replicas < 0 or replicas ~= math.floor(replicas) then
  error("invalid number of replicas: " .. tostring(given), 0)
end
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.replicas = math.floor(replicas)
return obj
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
