package main

import (
	"os"
	"strings"
	"testing"
)

// stdPackages are standard-library packages whose own tests must pass
// when kprof instruments them and their dependencies; KPROF_STD=all adds
// stdMore (CI runs these: compiling each package's instrumented test
// binary is most of the test's time).
var stdPackages = strings.Fields(`strings bytes strconv sort slices unicode/utf8
	fmt encoding/json encoding/binary compress/flate math/big regexp
	text/template go/parser sync context`)

// stdMore are more packages TestStdPackages runs with KPROF_STD=all.
var stdMore = strings.Fields(`maps bufio errors container/heap container/list
	encoding/base64 encoding/csv compress/gzip compress/lzw hash/crc32
	crypto/sha256 go/printer go/format path/filepath archive/tar archive/zip
	compress/zlib encoding/gob encoding/xml encoding/hex go/scanner go/token
	html/template image/png index/suffixarray log/slog math mime/multipart
	net/url text/tabwriter time unicode/utf16`)

// TestStdPackages runs `kprof test -short` on the standard library's own
// tests (several minutes the first time: it builds the instrumented
// standard library).
func TestStdPackages(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("several minutes; run without -short")
	}
	kprofBin := buildKprof(t)
	pkgs := stdPackages
	if os.Getenv("KPROF_STD") == "all" {
		pkgs = append(append([]string(nil), stdPackages...), stdMore...)
	}
	args := append([]string{"test", "-short"}, pkgs...)
	out, err := runCmd(t.TempDir(), []string{"KPROF_OUT=" + t.TempDir() + "/std.kprof"}, kprofBin, args...)
	if err != nil {
		t.Fatalf("kprof test -short %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	for _, p := range pkgs {
		if !strings.Contains(out, "ok  \t"+p+"\t") {
			t.Errorf("%s: no ok line in\n%s", p, out)
		}
	}
}
