// Package kprof holds the source of the packages kprof links into the
// programs it builds (counter, agent, profile). kprof build writes them to
// a private module in the user's cache and builds them with the user's
// flags, so that a module whose go.mod does not mention kprof can be built.
// The tools themselves live in cmd/kprof, rewrite, reports and bench.
package kprof

import "embed"

// Support is the source of the linked-in packages.
//
//go:embed counter/*.go agent/*.go agent/auto/*.go profile/*.go
var Support embed.FS
