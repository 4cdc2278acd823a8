#!/usr/bin/env bash
# Regenerates go.mod/go.sum for a Kubernetes release: every staging module that
# k8s.io/kubernetes requires at v0.0.0 is replaced by its published v0.N.M twin,
# because replace directives only work in the main module (see docs/testing.md).
# Run by hand when moving to another release; CI never runs it.
set -euo pipefail
KV=${1:?kube version like v1.36.3}; SV="v0.${KV#v1.}"
export GOTOOLCHAIN=local
cd "$(dirname "$0")"
rm -f go.mod go.sum
go mod init plumb.local/tools/k8s >/dev/null
gomod=$(go mod download -json "k8s.io/kubernetes@${KV}" | jq -r .GoMod)
mods=$( { awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod"
          sed -n 's|^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/src/.*|\1|p' "$gomod"; } | sort -u )
for m in $mods; do go mod edit -replace="${m}=${m}@${SV}"; done
go get "k8s.io/kubernetes@${KV}"
go get -tool k8s.io/kubernetes/cmd/kube-apiserver@${KV} k8s.io/kubernetes/cmd/kube-controller-manager@${KV} \
             k8s.io/kubernetes/cmd/kube-scheduler@${KV}
ETCD_V=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
go get -tool "go.etcd.io/etcd/server/v3@${ETCD_V}"
go mod tidy
grep '^godebug' "$gomod" >> go.mod || true
echo "pinned k8s ${KV}, etcd ${ETCD_V}"
