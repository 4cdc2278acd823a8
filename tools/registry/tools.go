//go:build tools

// Package tools records the registry binary scripts/testenv builds, so go.mod keeps its module.
package tools

import _ "github.com/distribution/distribution/v3/cmd/registry"
