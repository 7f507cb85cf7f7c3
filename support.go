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

// Source is kprof's own source: the module's go.mod and go.sum and the
// packages cmd/kprof is built from. go/types checks no language newer
// than the Go release it comes with, so a kprof asked to build with a
// newer release builds itself again with that release, from this source
// (cmd/kprof's host.go), to instrument the packages.
//
//go:embed go.mod go.sum support.go cmd/kprof/*.go counter/*.go agent/*.go agent/auto/*.go profile/*.go
//go:embed cost/*.go cost/*.txt cost/calibrate/*.go cost/calibrate/*.txt overlap/*.go reports/*.go reports/*.html
//go:embed gate/*.go rewrite/*.go rewrite/internal/edit/*.go toolchain/*.go toolchain/patches toolexec/*.go
var Source embed.FS
