package toolexec

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// copyPrebuilt writes, for a compile of one of kprof's own linked-in
// packages (counter, agent, overlap) that the program imports itself
// (package agent/kprofhttp imports agent), kprof's prebuilt archive of
// the package to the compile's output, with the build ID the go command
// asked for, and reports whether it did. The program then has one
// version of each: compiled again from the program's module, the package
// would differ from the prebuilt one in its export data (its files'
// positions), and the link would find the instrumented packages built
// against one counter and the binary holding the other ("fingerprint
// mismatch"). A compile with other files (a package's own tests) or
// without a build ID compiles as it is.
func copyPrebuilt(cfg *Config, pkgPath string, args, files []string) (bool, error) {
	if !strings.HasPrefix(pkgPath, "github.com/kprof/kprof/") {
		return false, nil
	}
	out, _ := flagValue(args, "-o")
	id, _ := flagValue(args, "-buildid")
	i := slices.IndexFunc(cfg.Support, func(sp SupportPkg) bool { return sp.ImportPath == pkgPath })
	if out == "" || id == "" || i < 0 || cfg.Support[i].Export == "" || len(cfg.Support[i].SFiles) > 0 {
		return false, nil
	}
	sp := cfg.Support[i]
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(sp.GoFiles))
	if !slices.Equal(names, want) {
		return false, nil
	}
	data, err := os.ReadFile(sp.Export)
	if err != nil {
		return false, err
	}
	old := buildID(data)
	if old == nil || len(old) != len(id) {
		return false, nil
	}
	data = bytes.ReplaceAll(data, old, []byte(id))
	return true, os.WriteFile(out, data, 0o666)
}

// buildID returns the build ID an archive's headers carry (`build id
// "…"`), or nil.
func buildID(archive []byte) []byte {
	const prefix = "\nbuild id \""
	i := bytes.Index(archive, []byte(prefix))
	if i < 0 {
		return nil
	}
	rest := archive[i+len(prefix):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 {
		return nil
	}
	return rest[:j]
}

// sameArchive reports whether two archives are the same but for their
// build IDs (a prebuilt package that copyPrebuilt copied).
func sameArchive(a, b []byte) bool {
	ia, ib := buildID(a), buildID(b)
	if ia == nil || ib == nil || len(ia) != len(ib) {
		return false
	}
	return bytes.Equal(bytes.ReplaceAll(a, ia, ib), b)
}
