# The image's CycloneDX 1.5 SBOM (scripts/image runs it with jq -n): the Debian packages left in
# the root file system, the crates compiled into the plumb binary, helm and kustomize with the Go
# modules linked into them. Inputs: $meta (`cargo metadata`), $debs (the packages' control
# fields), $helm/$kustomize (`go version -m`, parsed), $sums (Cargo.lock checksums), and the
# image's $digest, $tag, $version, $revision, $created, $debian (Debian's version) and $serial
# (a UUID made from the digest: the same image, the same SBOM).

# The crates of plumb's normal dependency graph for Linux: build dependencies and proc-macros
# (and what only they use) run at build time and are not in the binary.
def plumb_crates:
  ($meta[0].packages | map({key: .id, value: .}) | from_entries) as $pkgs
  | ($meta[0].resolve.nodes | map({key: .id, value: .}) | from_entries) as $nodes
  | ($meta[0].packages[] | select(.name == "plumb" and .source == null) | .id) as $root
  | def next($id):
      [$nodes[$id].deps[]
       | select(any(.dep_kinds[]; .kind == null))
       | .pkg
       | select(any($pkgs[.].targets[]; .kind | index("proc-macro")) | not)];
    {seen: {}, todo: [$root]}
    | until(.todo | length == 0;
        .todo[0] as $id
        | if .seen[$id] then .todo |= .[1:]
          else .seen[$id] = true | .todo = .todo[1:] + next($id) end)
    | .seen | keys | map($pkgs[.]) | map(select(.source != null))
    | sort_by(.name, .version);

def crate:
  ("pkg:cargo/\(.name)@\(.version)") as $purl
  | {type: "library", "bom-ref": $purl, name, version, purl: $purl}
  + (if .license then {licenses: [{expression: .license}]} else {} end)
  + (($sums[0]["\(.name)@\(.version)"]) as $h
     | if $h then {hashes: [{alg: "SHA-256", content: $h}]} else {} end);

def deb:
  ("pkg:deb/debian/\(.Package)@\(.Version | @uri)?arch=\(.Architecture)&distro=debian-\($debian | split(".")[0])") as $purl
  | {type: "library", "bom-ref": $purl, name: .Package, version: .Version, purl: $purl}
  + (if .Source then {properties: [{name: "debian:source", value: .Source}]} else {} end);

def go_tool($name; $b):
  ("pkg:golang/\($b.main.path)@\($b.main.version)") as $purl
  | {type: "application", "bom-ref": $purl, name: $name, version: $b.main.version, purl: $purl,
     properties: [{name: "golang:toolchain", value: $b.go},
                  {name: "path", value: "/usr/local/bin/\($name)"}],
     components: [$b.deps[]
       | ("pkg:golang/\(.path)@\(.version)") as $p
       | {type: "library", "bom-ref": "\($name):\($p)", name: .path, version, purl: $p}]};

(plumb_crates | map(crate)) as $crates
| ($debs[0] | map(deb)) as $debian_pkgs
| go_tool("helm"; $helm[0]) as $helm_c
| go_tool("kustomize"; $kustomize[0]) as $kustomize_c
| ("pkg:oci/plumb@\($digest | @uri)?tag=\($tag | split(":") | last | @uri)") as $image_ref
| {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    serialNumber: $serial,
    version: 1,
    metadata: {
      timestamp: $created,
      tools: {components: [{type: "application", name: "scripts/image", version: $revision}]},
      component: {type: "container", "bom-ref": $image_ref, name: "plumb", version: $version,
                  purl: $image_ref,
                  properties: [{name: "org.opencontainers.image.revision", value: $revision},
                               {name: "org.opencontainers.image.created", value: $created},
                               {name: "image.digest", value: $digest}]}
    },
    components: (
      [{type: "operating-system", "bom-ref": "debian-\($debian)", name: "debian",
        version: $debian}]
      + [{type: "application", "bom-ref": "plumb", name: "plumb", version: $version,
          licenses: [{expression: "Apache-2.0"}],
          properties: [{name: "path", value: "/usr/local/bin/plumb"},
                       {name: "revision", value: $revision}]}]
      + [$helm_c, $kustomize_c] + $debian_pkgs + $crates),
    dependencies: [
      {ref: $image_ref,
       dependsOn: (["debian-\($debian)", "plumb", $helm_c["bom-ref"], $kustomize_c["bom-ref"]])},
      {ref: "debian-\($debian)", dependsOn: [$debian_pkgs[]["bom-ref"]]},
      {ref: "plumb", dependsOn: [$crates[]["bom-ref"]]}
    ]
  }
