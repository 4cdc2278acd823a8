# What the differential harness compares of an Application, with timestamps, revisions' dates and
# names of generated objects taken out. Input: the Application object; output: a small JSON object
# with sorted lists, so both engines' answers compare with `diff`.
#
# One documented difference is normalised here because it touches every case with a
# cluster-scoped object (docs/compatibility.md): Argo CD's sync results give cluster-scoped
# objects the destination namespace (gitops-engine sets it on every target without one), Plumb
# gives them none. When that applies, `documented` names it, and the harness counts the case as
# one with documented differences.
def hookname: if (.name // "") | test("-[0-9a-f]{7}-(presync|sync|postsync|syncfail)-[0-9]+$") then "<generated>" else .name end;
def res_key: [(.group // ""), .kind, (.namespace // ""), hookname] | join("/");
def cluster_kinds: ["Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "APIService",
  "PersistentVolume", "StorageClass", "PriorityClass", "IngressClass", "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration"];
([(.status.resources // [])[] | select((.namespace // "") == "") | [(.group // ""), .kind, .name] | join("/")]) as $cluster
| {
  sync: .status.sync.status,
  health: .status.health.status,
  resources: [(.status.resources // [])[] | {
      key: res_key,
      status: .status,
      health: (.health.status // null),
      hook: (.hook // false),
      requiresPruning: (.requiresPruning // false)
    }] | sort_by(.key),
  conditions: [(.status.conditions // [])[].type] | sort,
  operation: (if .status.operationState then {
      phase: .status.operationState.phase,
      message: .status.operationState.message,
      results: [(.status.operationState.syncResult.resources // [])[]
        | ((.namespace // "") != "" and (([(.group // ""), .kind, .name] | join("/")) as $k | ($cluster | index($k)) != null
            or (.kind as $kind | cluster_kinds | index($kind)) != null)) as $scoped
        | {
          key: ([(.group // ""), .kind, (if $scoped then "" else (.namespace // "") end), hookname] | join("/")),
          status: .status,
          hookPhase: (.hookPhase // null),
          syncPhase: (.syncPhase // null),
          documented: $scoped
        }] | sort_by(.key)
    } else null end)
}
| .documented = (if ([.operation.results[]? | select(.documented)] | length) > 0
    then ["syncResult namespace of cluster-scoped objects"] else [] end)
| if .operation then .operation.results |= map(del(.documented)) else . end
