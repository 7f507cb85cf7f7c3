package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/kprof/kprof/profile"
)

// A program and a library in two modules, laid out by each build setup.
const (
	setupMain = `package main

import (
	"fmt"

	"example.com/lib"
)

func main() {
	s := 0
	for i := 0; i < 2000; i++ {
		s += lib.Sq(i) % 7
	}
	fmt.Println(s, tagged)
}
`
	setupTagged   = "//go:build !extra\n\npackage main\n\nconst tagged = \"plain\"\n"
	setupExtra    = "//go:build extra\n\npackage main\n\nconst tagged = \"extra\"\n"
	setupLib      = "package lib\n\n// Sq squares x the long way.\nfunc Sq(x int) int {\n\ts := 0\n\tfor i := 0; i < x%50; i++ {\n\t\ts += x\n\t}\n\treturn s\n}\n"
	setupLibMod   = "module example.com/lib\n\ngo 1.18\n"
	setupMainMod  = "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v1.0.0\n"
	setupVendored = "# example.com/lib v1.0.0\n## explicit\nexample.com/lib\n"
)

// writeTree writes files (slash paths) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// pgoProfile is a CPU profile naming the program's hot functions, valid
// for -pgo.
func pgoProfile(t *testing.T) string {
	t.Helper()
	fns := []*pprofile.Function{
		{ID: 1, Name: "main.main", SystemName: "main.main", Filename: "main.go", StartLine: 9},
		{ID: 2, Name: "example.com/lib.Sq", SystemName: "example.com/lib.Sq", Filename: "lib.go", StartLine: 4},
	}
	locs := []*pprofile.Location{
		{ID: 1, Line: []pprofile.Line{{Function: fns[0], Line: 11}}},
		{ID: 2, Line: []pprofile.Line{{Function: fns[1], Line: 6}}},
	}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10000000,
		TimeNanos:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(),
		Sample:     []*pprofile.Sample{{Location: []*pprofile.Location{locs[1], locs[0]}, Value: []int64{100, 1000000000}}},
		Location:   locs,
		Function:   fns,
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBuildSetups builds the same program in the setups users have —
// vendored modules, a go.work workspace, -trimpath, a main package with
// default.pgo (Go's default -pgo=auto), -cover, -buildmode=pie, GOFLAGS
// from the environment — and checks that each prints what its plain build
// prints and that exact mode counts the same instructions in main and the
// library as the plain module layout (-cover adds counters to the source:
// its total is not compared).
func TestBuildSetups(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("rebuilds the standard library for several build settings")
	}
	kprofBin := buildKprof(t)
	modules := func(extra map[string]string) map[string]string {
		files := map[string]string{
			"app/main.go":   setupMain,
			"app/tagged.go": setupTagged,
			"app/extra.go":  setupExtra,
			"app/go.mod":    setupMainMod + "\nreplace example.com/lib => ../lib\n",
			"lib/go.mod":    setupLibMod,
			"lib/lib.go":    setupLib,
		}
		for k, v := range extra {
			if v == "" {
				delete(files, k)
			} else {
				files[k] = v
			}
		}
		return files
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		flags  []string
		env    []string
		noSame bool // the counted source differs (-cover)
		want   string
	}{
		{name: "modules", files: modules(nil)},
		{name: "vendor", files: modules(map[string]string{
			"app/go.mod":                        setupMainMod,
			"app/vendor/modules.txt":            setupVendored,
			"app/vendor/example.com/lib/lib.go": setupLib,
			"lib/go.mod":                        "",
			"lib/lib.go":                        "",
		}), flags: []string{"-mod=vendor"}},
		{name: "workspace", files: modules(map[string]string{
			"go.work":    "go 1.22\n\nuse (\n\t./app\n\t./lib\n)\n",
			"app/go.mod": setupMainMod,
		})},
		{name: "trimpath", files: modules(nil), flags: []string{"-trimpath"}},
		{name: "pgo", files: modules(map[string]string{"app/default.pgo": pgoProfile(t)})},
		{name: "cover", files: modules(nil), flags: []string{"-cover"}, noSame: true},
		{name: "pie", files: modules(nil), flags: []string{"-buildmode=pie"}},
		{name: "goflags", files: modules(nil), env: []string{"GOFLAGS=-tags=extra"}, want: "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			app := filepath.Join(root, "app")
			plainBin := filepath.Join(t.TempDir(), "plain")
			if out, err := runCmd(app, tc.env, "go", append(append([]string{"build", "-o", plainBin}, tc.flags...), ".")...); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			want, err := runCmd(root, []string{"GOCOVERDIR=" + t.TempDir()}, plainBin)
			if err != nil {
				t.Fatalf("plain build: %v\n%s", err, want)
			}
			if tc.want != "" && !strings.Contains(want, tc.want) {
				t.Fatalf("plain build printed %q, want %q in it", want, tc.want)
			}
			bin := filepath.Join(t.TempDir(), "app")
			args := append(append([]string{"build", "-o", bin, "-pkgs", "main,example.com/lib"}, tc.flags...), ".")
			if out, err := runCmd(app, tc.env, kprofBin, args...); err != nil {
				t.Fatalf("kprof build: %v\n%s", err, out)
			}
			covDir := t.TempDir()
			out := filepath.Join(t.TempDir(), "p.kprof")
			got, err := runCmd(root, []string{"KPROF_MODE=exact", "KPROF_OUT=" + out, "GOCOVERDIR=" + covDir}, bin)
			if err != nil || got != want {
				t.Fatalf("kprof build printed %q (%v), plain build %q", got, err, want)
			}
			p, err := profile.ParseFile(out)
			if err != nil {
				t.Fatal(err)
			}
			self := map[string]int64{}
			for _, fs := range p.Flat() {
				self[fs.Func.Name] = fs.Self
			}
			if self["main.main"] == 0 || self["example.com/lib.Sq"] == 0 {
				t.Errorf("profile lacks main.main or example.com/lib.Sq: %v", self)
			}
			if tc.name == "cover" {
				if m, _ := filepath.Glob(filepath.Join(covDir, "covmeta.*")); len(m) == 0 {
					t.Errorf("-cover: no coverage data in GOCOVERDIR")
				}
			}
			if !tc.noSame {
				if setupTotal == 0 {
					setupTotal = p.TotalInstructions
				} else if p.TotalInstructions != setupTotal {
					t.Errorf("exact total %d, %d in the first setup", p.TotalInstructions, setupTotal)
				}
			}
		})
	}
}

// setupTotal is the exact total of TestBuildSetups' first setup.
var setupTotal int64

// TestNewerLanguage builds a Go 1.27 program that uses generic methods.
// kprof analyses code with the go/types of the Go that built it; built
// with an older release, it builds itself with Go 1.27 first (host.go).
// Either way the program is instrumented: the method appears in the
// profile with its calls, and math/rand/v2 (whose methods have type
// parameters in Go 1.27) is counted too.
func TestNewerLanguage(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/genericmethods")
	bin := filepath.Join(t.TempDir(), "gm")
	// A go 1.27 go.mod needs Go 1.27: the go command switches to it by
	// itself unless GOTOOLCHAIN says otherwise (local, on some machines).
	var env []string
	if os.Getenv("GOTOOLCHAIN") == "" {
		env = []string{"GOTOOLCHAIN=go1.27.3"}
	}
	out, err := runCmd(dir, env, kprofBin, "build", "-o", bin, ".")
	if err != nil {
		t.Fatalf("kprof build: %v\n%s", err, out)
	}
	if strings.Contains(out, "not instrumented") {
		t.Errorf("kprof build left packages uninstrumented:\n%s", out)
	}
	prof := runProfile(t, bin, "exact")
	calls := make(map[string]int64)
	prof.Walk(func(stack []profile.Func, n *profile.Node) {
		calls[stack[len(stack)-1].Name] += n.Calls
	})
	if c := calls["main.Box.Map[...]"]; c != 100 {
		t.Errorf("main.Box.Map[...]: %d calls, want 100\n%s", c, out)
	}
	if c := calls["math/rand/v2.(*Rand).N[...]"]; c == 0 {
		t.Errorf("math/rand/v2.(*Rand).N[...] not in the profile\n%s", out)
	}
}
