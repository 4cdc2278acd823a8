//go:build tools

// The blank import makes `go mod tidy` keep every module the argocd command needs.
package tools

import _ "github.com/argoproj/argo-cd/v3/cmd"
