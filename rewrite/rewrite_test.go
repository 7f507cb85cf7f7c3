package rewrite

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// instrument type-checks one file (imports from source) and instruments it.
func instrument(t *testing.T, name string, src []byte) (*Input, *Output) {
	t.Helper()
	return instrumentWith(t, name, src, DefaultOptions)
}

// instrumentWith is instrument with options.
func instrumentWith(t *testing.T, name string, src []byte, opts Options) (*Input, *Output) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Fset: fset, Files: []*ast.File{f}, Srcs: [][]byte{src}, Names: []string{name}, Path: f.Name.Name, Info: NewInfo()}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	// A first line "// lang: go1.N" type-checks the file as a module of
	// that language version would be.
	if lang, ok := strings.CutPrefix(string(src[:bytes.IndexByte(src, '\n')+1]), "// lang: "); ok {
		conf.GoVersion = strings.TrimSpace(lang)
	}
	in.Pkg, err = conf.Check(f.Name.Name, fset, in.Files, in.Info)
	if err != nil {
		t.Fatal(err)
	}
	opts.CheckPlans = true
	out, err := Package(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return in, out
}

// TestInertCalls checks which functions calls into inert packages leave
// leaves (Options.Inert): none that passes a function or interface value,
// or something holding one.
func TestInertCalls(t *testing.T) {
	const src = `package p

import (
	"strings"
	"sync"
	"sync/atomic"
)

var (
	mu   sync.Mutex
	n    int64
	once sync.Once
	pool = sync.Pool{New: func() any { return 1 }}
)

func lock()                   { mu.Lock(); n++; mu.Unlock() }
func add() int64              { return atomic.AddInt64(&n, 1) }
func do(f func())             { once.Do(f) }
func get() any                { return pool.Get() }
func upper(s string) string   { return strings.ToUpper(s) }
func both() int64             { lock(); return add() }
func deferred()               { defer mu.Unlock(); mu.Lock() }
func started()                { go mu.Lock() }
`
	opts := DefaultOptions
	opts.Inert = func(path string) bool { return path == "sync" || path == "sync/atomic" }
	_, out := instrumentWith(t, "p.go", []byte(src), opts)
	want := map[string]bool{
		"p.lock":     true,  // *sync.Mutex holds no function
		"p.add":      true,  // atomic.AddInt64(*int64, int64)
		"p.do":       false, // passes a func
		"p.get":      false, // the Pool holds New
		"p.upper":    false, // strings is instrumented
		"p.both":     false, // calls instrumented functions
		"p.deferred": false, // defer
		"p.started":  false, // go
	}
	for _, p := range out.Plans {
		if w, ok := want[p.Name]; ok && p.Leaf != w {
			t.Errorf("%s: leaf %v, want %v", p.Name, p.Leaf, w)
		}
		delete(want, p.Name)
	}
	for name := range want {
		t.Errorf("%s: no plan", name)
	}
	// Without Inert, every call counts.
	_, out = instrument(t, "p.go", []byte(src))
	for _, p := range out.Plans {
		if p.Leaf && p.Name != "p.init" && !strings.HasSuffix(p.Name, ".func1") {
			t.Errorf("%s: a leaf with Inert unset", p.Name)
		}
	}
}

// describe renders the weights and checks of every plan, for golden files.
func describe(out *Output) string {
	var b strings.Builder
	for _, p := range out.Plans {
		fmt.Fprintf(&b, "%s leaf=%v total=%d\n", p.Name, p.Leaf, p.Total)
		for _, blk := range p.Fn.Blocks {
			fmt.Fprintf(&b, "  block %d %-16s weight %d\n", blk.Index, blk.Comment, p.Weights[blk.Index])
		}
	}
	for _, a := range out.Approx {
		fmt.Fprintf(&b, "approximate: %s\n", a)
	}
	return b.String()
}

// rendered is what a golden file holds: the plans (describe), the
// rewritten file and the tables file.
func rendered(out *Output) string {
	return describe(out) + "----\n" + string(out.Files[0]) + "---- tables\n" + string(out.Tables)
}

// TestGolden instruments each rewrite/testdata/*.go file and compares the
// block weights and the rewritten source with the .golden files.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.go")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	// Programs of ../testdata/progs whose rewritten source is a golden
	// file too (the end-to-end tests run them).
	for _, prog := range []string{"branches", "clears", "fig4", "lazy", "results", "switches"} {
		files = append(files, filepath.Join("..", "testdata", "progs", prog, "main.go"))
	}
	for _, file := range files {
		golden := strings.TrimSuffix(file, ".go") + ".golden"
		if filepath.Base(file) == "main.go" {
			golden = filepath.Join("testdata", filepath.Base(filepath.Dir(file))+".golden")
		}
		t.Run(filepath.Base(golden), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, out := instrument(t, filepath.Base(file), src)
			checkGolden(t, file, golden, rendered(out), "TestGolden")
			typeCheck(t, src, out)
		})
	}
}

// typeCheck type-checks the rewrite of the one-file package src, with
// its tables, at the file's language version ("// lang:" line, as
// instrumentWith reads it): what kprof inserts must compile where the
// file does.
func typeCheck(t *testing.T, src []byte, out *Output) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for i, text := range [][]byte{out.Tables, out.Files[0]} {
		if text == nil {
			continue
		}
		f, err := parser.ParseFile(fset, fmt.Sprintf("rewritten%d.go", i), text, 0)
		if err != nil {
			t.Fatalf("rewritten source: %v", err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if lang, ok := strings.CutPrefix(string(src[:bytes.IndexByte(src, '\n')+1]), "// lang: "); ok {
		conf.GoVersion = strings.TrimSpace(lang)
	}
	if _, err := conf.Check(files[0].Name.Name, fset, files, nil); err != nil {
		t.Errorf("the rewritten source does not type-check (%s): %v", conf.GoVersion, err)
	}
}

// checkGolden compares got, the rewrite of file, with the golden file (or
// writes it, with -update); test names the test that refreshes it.
func checkGolden(t *testing.T, file, golden, got, test string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s; run go test ./rewrite -run %s -update and review the diff\n--- got ---\n%s", file, golden, test, got)
	}
}
