package kprof

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestSourceComplete checks that Source holds every file the go command
// builds cmd/kprof from in this module (its packages' Go and embedded
// files), so that the kprof a newer Go release builds from it is this one.
func TestSourceComplete(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Module,GoFiles,EmbedFiles", "./cmd/kprof").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/kprof/kprof"
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p struct {
			ImportPath          string
			Module              *struct{ Path string }
			GoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || p.Module.Path != module {
			continue
		}
		dir := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, f := range append(p.GoFiles, p.EmbedFiles...) {
			name := path.Join(dir, f)
			if p.ImportPath == module {
				name = f // the root package's embedded files are named from the root
			}
			if _, err := Source.Open(name); err != nil {
				t.Errorf("Source lacks %s (package %s)", name, p.ImportPath)
			}
			n++
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := Source.Open(f); err != nil {
			t.Errorf("Source lacks %s", f)
		}
	}
	if n < 50 {
		t.Errorf("go list named %d files of cmd/kprof's packages", n)
	}
}
