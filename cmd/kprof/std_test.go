package main

import (
	"strings"
	"testing"
)

// stdPackages are standard-library packages whose own tests must pass
// when kprof instruments them and their dependencies.
var stdPackages = strings.Fields(`strings bytes strconv sort slices maps unicode/utf8
	bufio fmt errors container/heap container/list encoding/json encoding/binary
	encoding/base64 encoding/csv compress/flate compress/gzip compress/lzw hash/crc32
	crypto/sha256 math/big regexp text/template go/parser go/printer go/format
	path/filepath sync context`)

// TestStdPackages runs `kprof test -short` on the standard library's own
// tests (several minutes the first time: it builds the instrumented
// standard library).
func TestStdPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("several minutes; run without -short")
	}
	kprofBin := buildKprof(t)
	args := append([]string{"test", "-short"}, stdPackages...)
	out, err := runCmd(t.TempDir(), []string{"KPROF_OUT=" + t.TempDir() + "/std.kprof"}, kprofBin, args...)
	if err != nil {
		t.Fatalf("kprof test -short %s: %v\n%s", strings.Join(stdPackages, " "), err, out)
	}
	for _, p := range stdPackages {
		if !strings.Contains(out, "ok  \t"+p+"\t") {
			t.Errorf("%s: no ok line in\n%s", p, out)
		}
	}
}
