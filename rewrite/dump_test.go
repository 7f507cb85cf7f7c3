package rewrite

import (
	"os"
	"testing"
)

// TestDump prints the rewritten source of the file named by
// KPROF_DUMP (a debugging aid: go test ./rewrite -run TestDump -v).
func TestDump(t *testing.T) {
	file := os.Getenv("KPROF_DUMP")
	if file == "" {
		t.Skip("KPROF_DUMP names no file")
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, out := instrument(t, "main.go", src)
	t.Logf("%s----\n%s", describe(out), out.Files[0])
}
