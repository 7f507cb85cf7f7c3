package toolchain

import "maps"

// go127 is the patch set for Go 1.27: Go 1.26's, but for what changed.
//
//   - The hash functions' setup moved to internal/runtime/maps
//     (maps.AlgInit), which now always seeds the fallback hash: in
//     deterministic mode the runtime turns the AES hash off after it
//     (runtime edits below), so that all machines of a GOARCH agree.
//   - The register allocator's regMask became a struct with methods
//     (patches/go1.27/compile/ssa/kprof_regmask.go).
var go127 = &Release{
	Name:     "go1.27",
	Dirs:     []string{"go1.27", "go1.26"},
	Compiler: go126.Compiler,
	Packages: map[string]*PackagePatch{
		"runtime": {
			Edits:  go127RuntimeEdits(),
			Fields: go126.Packages["runtime"].Fields,
		},
		"sync":      go126.Packages["sync"],
		"testing":   go126.Packages["testing"],
		"os/signal": go126.Packages["os/signal"],
	},
}

func go127RuntimeEdits() map[string][]Edit {
	edits := maps.Clone(runtimeEdits)
	delete(edits, "alg.go")
	edits["proc.go"] = append(edits["proc.go"][:len(edits["proc.go"]):len(edits["proc.go"])],
		Edit{"\tmaps.AlgInit()   // maps, hash, rand must not be used before this call\n",
			"\tmaps.AlgInit(); if kprofDet { maps.UseAeshash = false } // maps, hash, rand must not be used before this call\n"})
	return edits
}
