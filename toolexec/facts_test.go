package toolexec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFactsArchive appends facts to an archive the Go toolchain made and
// reads them back, and checks that the linker still links the archive
// (it skips the member), that archives without facts have none, and that
// a package compiled again gets the other members but the facts
// (copyObjects, for relink).
func TestFactsArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Go toolchain")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"linked\") }\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	importcfg := filepath.Join(dir, "importcfg")
	out, err := exec.Command("go", "list", "-export", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "-deps", "runtime").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	if err := os.WriteFile(importcfg, out, 0o666); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "main.a")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", append([]string{"tool"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go tool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("compile", "-p", "main", "-importcfg", importcfg, "-pack", "-o", archive, src)
	if got, err := readFacts(archive); err != nil || got != nil {
		t.Fatalf("readFacts of an archive without facts: %v, %v; want none", got, err)
	}
	want := map[string]int64{"p.sq": 3, "(*p.T).Len": 2, "p.odd": 5}
	if err := appendFacts(archive, want); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "linked.a")
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(linked, data, 0o666); err != nil {
		t.Fatal(err)
	}
	got, err := readFacts(archive)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("readFacts: %v, %v; want %v", got, err, want)
	}
	// A package compiled again (relink) gets the objects the go command
	// appended (cgo's, assembly's), not the facts.
	if err := appendMember(archive, "_x001.o", []byte("not an object")); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.a")
	run("compile", "-p", "main", "-importcfg", importcfg, "-pack", "-o", again, src)
	if err := copyObjects(archive, again); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := archiveMembers(again, func(name string, data []byte) bool {
		names = append(names, name)
		if name == "_x001.o" && string(data) != "not an object" {
			t.Errorf("copied %s: %q", name, data)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"__.PKGDEF", "_go_.o", "_x001.o"}; !reflect.DeepEqual(names, want) {
		t.Errorf("members after copyObjects: %q, want %q", names, want)
	}
	exe := filepath.Join(dir, "main")
	run("link", "-importcfg", importcfg, "-o", exe, linked)
	if out, err := exec.Command(exe).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("linked")) {
		t.Fatalf("linked program: %v\n%s", err, out)
	}
}

// TestFactsDecode checks the facts text: sorted, round trip, and what a
// decoder must reject.
func TestFactsDecode(t *testing.T) {
	quiet := map[string]int64{"b.f": 1, "a.g": 20, "(a.T).M": 0}
	text := encodeFacts(quiet)
	if want := factsHeader + "(a.T).M 0\na.g 20\nb.f 1\n"; string(text) != want {
		t.Errorf("encodeFacts = %q, want %q", text, want)
	}
	if got, err := decodeFacts(text); err != nil || !reflect.DeepEqual(got, quiet) {
		t.Errorf("decodeFacts = %v, %v; want %v", got, err, quiet)
	}
	for _, bad := range []string{
		"",
		"kprof quiet facts 2\na.f 1\n",
		factsHeader + "a.f\n",
		factsHeader + "a.f x\n",
		factsHeader + "a.f -1\n",
		factsHeader + " 1\n",
	} {
		if got, err := decodeFacts([]byte(bad)); err == nil {
			t.Errorf("decodeFacts(%q) = %v, want an error", bad, got)
		}
	}
}
