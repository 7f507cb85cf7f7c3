package toolexec

import (
	"os"
	"path/filepath"
	"testing"
)

// copyPrebuilt copies a prebuilt kprof package with the build ID asked
// for, and only when the compile is of that package's own files.
func TestCopyPrebuilt(t *testing.T) {
	dir := t.TempDir()
	prebuilt := filepath.Join(dir, "agent.a")
	archive := "!<arch>\n__.PKGDEF\ngo object linux amd64\nbuild id \"aaaa/bbbb\"\nexport data\n_go_.o\ngo object linux amd64\nbuild id \"aaaa/bbbb\"\ncode\n"
	if err := os.WriteFile(prebuilt, []byte(archive), 0o666); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Support: []SupportPkg{{ImportPath: "github.com/kprof/kprof/agent", Export: prebuilt, GoFiles: []string{"b.go", "a.go"}}}}
	out := filepath.Join(dir, "out.a")
	for _, tc := range []struct {
		name, pkg string
		args      []string
		files     []string
		want      string // out's content, "" for no copy
	}{
		{"copied", "github.com/kprof/kprof/agent", []string{"compile", "-o", out, "-buildid", "cccc/cccc"}, []string{"/m/agent/a.go", "/m/agent/b.go"},
			"!<arch>\n__.PKGDEF\ngo object linux amd64\nbuild id \"cccc/cccc\"\nexport data\n_go_.o\ngo object linux amd64\nbuild id \"cccc/cccc\"\ncode\n"},
		{"its tests", "github.com/kprof/kprof/agent", []string{"compile", "-o", out, "-buildid", "cccc/cccc"}, []string{"/m/agent/a.go", "/m/agent/b.go", "/m/agent/a_test.go"}, ""},
		{"no build ID", "github.com/kprof/kprof/agent", []string{"compile", "-o", out}, []string{"/m/agent/a.go", "/m/agent/b.go"}, ""},
		{"other length", "github.com/kprof/kprof/agent", []string{"compile", "-o", out, "-buildid", "cc/cc"}, []string{"/m/agent/a.go", "/m/agent/b.go"}, ""},
		{"not prebuilt", "github.com/kprof/kprof/agent/kprofhttp", []string{"compile", "-o", out, "-buildid", "cccc/cccc"}, []string{"/m/agent/kprofhttp/a.go"}, ""},
		{"not kprof's", "example.com/agent", []string{"compile", "-o", out, "-buildid", "cccc/cccc"}, []string{"/m/agent/a.go", "/m/agent/b.go"}, ""},
	} {
		os.Remove(out)
		done, err := copyPrebuilt(cfg, tc.pkg, tc.args, tc.files)
		got, _ := os.ReadFile(out)
		if err != nil || done != (tc.want != "") || string(got) != tc.want {
			t.Errorf("%s: %v %v, wrote %q; want %q", tc.name, done, err, got, tc.want)
		}
		if tc.want != "" && !sameArchive(got, []byte(archive)) {
			t.Errorf("%s: the copy is not the prebuilt archive but for its build ID", tc.name)
		}
	}
	if sameArchive([]byte(archive), []byte(archive+"x")) {
		t.Errorf("sameArchive: archives of different content are the same")
	}
}
