//go:build tools

// Package tools records the token server scripts/testenv builds, so go.mod keeps its module:
// the distribution project's own Docker registry token server (contrib/token-server of
// docker/distribution v2.8.3, htpasswd users, ES256 tokens), which a registry configured with
// `auth: token` sends clients to. plumb-testenv's oci_registry runs it for bearer-token tests.
package tools

import _ "github.com/docker/distribution/contrib/token-server"
