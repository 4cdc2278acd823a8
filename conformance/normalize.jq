# What the differential harness compares of an Application, with timestamps, revisions' dates and
# names of generated objects taken out. Input: the Application object; output: a small JSON object
# with sorted lists, so both engines' answers compare with `diff`.
def hookname: if (.name // "") | test("-[0-9a-f]{7}-(presync|sync|postsync|syncfail)-[0-9]+$") then "<generated>" else .name end;
def res_key: [(.group // ""), .kind, (.namespace // ""), (.name // "")] | join("/");
{
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
      results: [(.status.operationState.syncResult.resources // [])[] | {
          key: ([(.group // ""), .kind, (.namespace // ""), hookname] | join("/")),
          status: .status,
          hookPhase: (.hookPhase // null),
          syncPhase: (.syncPhase // null)
        }] | sort_by(.key)
    } else null end)
}
