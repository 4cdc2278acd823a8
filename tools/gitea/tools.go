//go:build tools

// Keeps gitea.dev in go.mod: scripts/gitea builds its main package (gitea.dev itself).
package tools

import _ "gitea.dev"
