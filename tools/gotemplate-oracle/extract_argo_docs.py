#!/usr/bin/env python3
"""Builds crates/plumb-gotemplate/tests/corpus/argo-docs.json: every string with `{{` in every
`goTemplate: true` ApplicationSet of Argo CD's docs/operator-manual/applicationset/*.md and
applicationset/examples/**.yaml, with params shaped like the ones its generators produce.

Usage: extract_argo_docs.py ARGO_SOURCE_DIR OUT.json
"""
import copy, glob, json, os, re, sys
import yaml

src, out = sys.argv[1], sys.argv[2]

BASE = {
    # clusters generator (goTemplate shape)
    "name": "staging", "nameNormalized": "staging", "server": "https://staging.example.com:6443",
    "project": "default",
    "metadata": {"labels": {"environment": "staging", "argocd.argoproj.io/secret-type": "cluster",
                            "akuity.io/argo-cd-cluster-name": "staging", "my-label": "x", "region": "us-east-1"},
                 "annotations": {"foo": "bar", "my-annotation": "y"}},
    # git generators
    "path": {"path": "applicationset/examples/git-generator-directory/cluster-addons/argo-workflows",
             "basename": "argo-workflows", "basenameNormalized": "argo-workflows",
             "filename": "config.json", "filenameNormalized": "config.json",
             "segments": ["applicationset", "examples", "git-generator-directory", "cluster-addons", "argo-workflows"]},
    "cluster": {"address": "https://1.2.3.4", "name": "engineering-dev", "owner": "cluster-admin@company.com"},
    "aws_account": "123456", "asset_id": "11223344",
    # scmProvider
    "organization": "myorg", "repository": "myrepo", "url": "https://github.com/myorg/myrepo.git",
    "branch": "main", "branchNormalized": "main", "sha": "0123456789abcdef0123456789abcdef01234567",
    "short_sha": "01234567", "short_sha_7": "0123456", "repository_id": "1234",
    # pullRequest
    "number": "22", "branch_slug": "feature-x", "target_branch": "main", "target_branch_slug": "main",
    "head_sha": "fedcba9876543210fedcba9876543210fedcba98", "head_short_sha": "fedcba98",
    "head_short_sha_7": "fedcba9", "author": "octocat", "title": "Add feature X",
    # plugin / clusterDecisionResource
    "clusterName": "cluster-01", "generator": {"input": {"parameters": {"map": {"key": "value"}}}},
    "values": {},
    # keys that plugin generators and git files generators' files provide in the examples
    "chart": "guestbook", "repoUrl": "https://charts.example.com", "version": "1.2.3",
    "releaseName": "guestbook", "namespace": "guestbook", "environment": "staging", "replicas": "3",
    "region": "us-east-1", "clusters": [{"name": "a"}, {"name": "b"}],
}


def strings(node, acc):
    if isinstance(node, str):
        if "{{" in node:
            acc.append(node)
    elif isinstance(node, dict):
        for v in node.values():
            strings(v, acc)
    elif isinstance(node, list):
        for v in node:
            strings(v, acc)


def generators(node, found):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("list", "clusters", "git", "scmProvider", "pullRequest", "plugin", "clusterDecisionResource"):
                found.append((k, v))
            generators(v, found)
    elif isinstance(node, list):
        for v in node:
            generators(v, found)


def params_for(spec):
    p = copy.deepcopy(BASE)
    found = []
    generators(spec.get("generators", []), found)
    for kind, g in found:
        if not isinstance(g, dict):
            continue
        if kind == "list" and isinstance(g.get("elements"), list) and g["elements"]:
            el = g["elements"][0]
            if isinstance(el, dict):
                p.update(copy.deepcopy(el))
        vals = g.get("values")
        if isinstance(vals, dict):
            for k, v in vals.items():
                p["values"][k] = v if isinstance(v, str) and "{{" not in v else "value-" + k
    return p


def appsets(text):
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    return [d for d in docs if isinstance(d, dict) and isinstance(d.get("spec"), dict)
            and d["spec"].get("goTemplate") is True]


cases, seen = [], set()
sources = []
for md in sorted(glob.glob(os.path.join(src, "docs/operator-manual/applicationset/*.md"))):
    text = open(md).read()
    for i, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", text, re.S)):
        sources.append((f"{os.path.basename(md)}#{i}", block))
for y in sorted(glob.glob(os.path.join(src, "applicationset/examples/**/*.yaml"), recursive=True)):
    sources.append((os.path.relpath(y, os.path.join(src, "applicationset/examples")), open(y).read()))

for where, text in sources:
    for n, appset in enumerate(appsets(text)):
        spec = appset["spec"]
        acc = []
        strings(spec.get("template", {}), acc)
        if isinstance(spec.get("templatePatch"), str):
            acc.append(spec["templatePatch"])
        data = params_for(spec)
        opts = spec.get("goTemplateOptions") or []
        for j, t in enumerate(acc):
            key = (t, json.dumps(data, sort_keys=True), tuple(opts))
            if key in seen:
                continue
            seen.add(key)
            cases.append({"name": f"argo-docs/{where}/{n}/{j}", "template": t, "data": data, "options": opts})

json.dump({"cases": cases}, open(out, "w"), indent=1, sort_keys=True)
print(f"{len(cases)} cases from {len(sources)} sources", file=sys.stderr)
