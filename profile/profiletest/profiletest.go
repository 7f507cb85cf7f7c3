// Package profiletest builds profiles for tests of the packages that read
// them (reports, gate): a profile from folded stacks, with functions whose
// files and lines are distinct and predictable.
package profiletest

import (
	"strings"

	"github.com/kprof/kprof/profile"
)

// Profile builds a profile of the given mode from folded stacks: each line
// is "f;g;h INSTRUCTIONS [SAMPLES [CALLS]]", the stack outermost first,
// each name made a function by Func. It panics on a malformed line.
func Profile(mode string, folded ...string) *profile.Profile {
	p := &profile.Profile{
		Meta: profile.Meta{
			Mode: mode, MetricVersion: profile.MetricVersion, Program: "demo",
			GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", KprofVersion: "v0.1.0",
		},
		Root: &profile.Node{},
	}
	if mode == profile.ModeSample {
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
func Func(name string) profile.Func {
	pkg, _, _ := strings.Cut(name, ".")
	return profile.Func{Name: name, File: "/src/" + pkg + "/" + pkg + ".go", Line: len(name)}
}
