# The generated Applications and the sets' status, without what differs by run: server-assigned
# metadata, owner UIDs, the Applications' status (the application controller's, not the
# ApplicationSet controller's), timestamps. Input: $apps, $appsets (kubectl get -o json), $sets
# (the case's set names).
def meta: .metadata | del(.uid, .resourceVersion, .managedFields, .creationTimestamp,
  .generation, .deletionTimestamp, .deletionGracePeriodSeconds)
  | if .ownerReferences then .ownerReferences |= map(del(.uid)) else . end
  | if .annotations then .annotations |= del(."kubectl.kubernetes.io/last-applied-configuration") else . end
  | if .annotations == {} then del(.annotations) else . end;
{
  applications: [$apps[0].items[] | select([.metadata.ownerReferences[]?.name] | any(. as $o | $sets | index($o)))
                 | {metadata: meta, spec, operation: (.operation | if . then del(.initiatedBy) else . end)}
                 | with_entries(select(.value != null))] | sort_by(.metadata.name),
  applicationSets: [$appsets[0].items[] | select(.metadata.name as $n | $sets | index($n)) | {
      name: .metadata.name,
      conditions: [.status.conditions[]? | {type, status, reason, message}] | sort_by(.type),
      applicationStatus: [.status.applicationStatus[]? | del(.lastTransitionTime)
                          | if .targetRevisions then . else . end] | sort_by(.application),
      resources: [.status.resources[]? | {name, status}] | sort_by(.name)
    }] | sort_by(.name)
}
