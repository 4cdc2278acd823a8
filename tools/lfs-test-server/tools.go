//go:build tools

// Package tools records the Git LFS server scripts/testenv builds, so go.mod keeps its module:
// git-lfs's own reference server (github.com/git-lfs/lfs-test-server: the LFS batch API and
// object storage, users and passwords from its admin API). plumb-testenv's git_lfs runs it for the
// `enableLfs` tests.
package tools

import _ "github.com/git-lfs/lfs-test-server"
