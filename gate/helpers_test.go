package gate

import (
	"strings"

	"github.com/kprof/kprof/overlap"
)

// buildProfile builds a profile from folded stacks: each line is
// "f;g;h INSTRUCTIONS [SAMPLES [CALLS]]", the stack outermost first. A
// function's file is its package's name with ".go", its line the length
// of its name, so every function has a distinct, predictable location.
func buildProfile(mode string, folded ...string) *overlap.Profile {
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
		if err := p.AddFolded(line, testFunc); err != nil {
			panic(err)
		}
	}
	return p
}

func testFunc(name string) overlap.Func {
	pkg, _, _ := strings.Cut(name, ".")
	return overlap.Func{Name: name, File: "/src/" + pkg + "/" + pkg + ".go", Line: len(name)}
}
