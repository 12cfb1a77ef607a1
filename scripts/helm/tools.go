//go:build tools

// Package tools pins the helm command of helm.sh/helm/v3 for `go build`.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
