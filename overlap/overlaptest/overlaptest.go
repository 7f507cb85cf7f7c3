// Package overlaptest builds profiles for tests of the packages that read
// them (reports, gate): a profile from folded stacks, with functions whose
// files and lines are distinct and predictable.
package overlaptest

import (
	"strings"

	"github.com/kprof/kprof/overlap"
)

// Profile builds a profile of the given mode from folded stacks: each line
// is "f;g;h INSTRUCTIONS [SAMPLES [CALLS]]", the stack outermost first,
// each name made a function by Func. It panics on a malformed line.
func Profile(mode string, folded ...string) *overlap.Profile {
	p := &overlap.Profile{
		Meta: overlap.Meta{
			Mode: mode, MetricVersion: overlap.MetricVersion, Program: "demo",
			GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", KprofVersion: "v0.1.0",
		},
		Root: &overlap.Node{},
	}
	if mode == overlap.ModeSample {
		p.Meta.Granularity, p.Meta.Jitter, p.Meta.Seed = 100, 10, 1
	}
	for _, line := range folded {
		if err := p.AddFolded(line, Func); err != nil {
			panic(err)
		}
	}
	return p
}

// Func is the function named name: its file is /src/PKG/PKG.go (PKG the
// name up to its first dot), its line the length of its name.
func Func(name string) overlap.Func {
	pkg, _, _ := strings.Cut(name, ".")
	return overlap.Func{Name: name, File: "/src/" + pkg + "/" + pkg + ".go", Line: len(name)}
}
