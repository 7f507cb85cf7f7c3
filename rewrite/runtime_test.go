package rewrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A runtime without the shape the patch expects fails closed with a message
// naming the supported Go versions.
func TestPatchRuntimeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"runtime2.go": "package runtime\n\ntype g struct {\n\tstack uintptr\n}\n",
		"proc.go":     "package runtime\n\nfunc goexit1() {\n}\n",
	}
	for _, tc := range []struct{ name, file, src string }{
		{"no g struct", "runtime2.go", "package runtime\n\ntype m struct{}\n"},
		{"no goexit1", "proc.go", "package runtime\n\nfunc goexit0() {}\n"},
		{"no race context", "proc.go", "package runtime\n\nfunc goexit1() {\n}\n"},
	} {
		var paths []string
		for name, src := range files {
			if name == tc.file {
				src = tc.src
			}
			p := filepath.Join(dir, tc.name, name)
			os.MkdirAll(filepath.Dir(p), 0o777)
			if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		_, err := patchRuntime(paths, t.TempDir(), "go1.99.0")
		if err == nil || !strings.Contains(err.Error(), "kprof supports "+SupportedGo+".x only") || !strings.Contains(err.Error(), "go1.99.0") {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}
