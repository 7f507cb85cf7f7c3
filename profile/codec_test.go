package profile

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// encode returns p's encoding, failing the test on an error.
func encode(t testing.TB, p *Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// sameProfile fails the test unless got and want are the same profile: equal
// metadata, totals and contexts, whatever the order of children.
func sameProfile(t testing.TB, got, want *Profile) {
	t.Helper()
	if g, w := encode(t, got), encode(t, want); !bytes.Equal(g, w) {
		t.Errorf("profiles differ:\ngot  %s\nwant %s", folded(got), folded(want))
	}
}

// testProfiles are profiles every codec test runs on.
func testProfiles() map[string]*Profile {
	full := build("main.main;main.work;fmt.Println 120 3 7", "main.main;main.work 5000 40 1", "main.main 12 0 1",
		"main.main;main.work;main.work;main.work 77 1 2", "runtime.goexit;main.worker 300 2 1")
	full.Meta = Meta{
		Mode: ModeSample, Granularity: 10_000, Jitter: 100, Seed: math.MaxUint64, MetricVersion: MetricVersion,
		KprofVersion: "v0.1.0", GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "arm64", Program: "prog",
	}
	full.TotalInstructions = 1 << 40
	huge := build("f " + "9223372036854775807")
	huge.TotalInstructions, huge.TotalSamples = math.MaxInt64, math.MaxInt64
	odd := &Profile{Root: &Node{Children: []*Node{
		{Func: Func{Name: "héllo.世界"}, Instructions: 1},
		{Func: Func{Name: "f", File: "", Line: 0}},
		{Func: Func{Name: "f", File: "f.go", Line: math.MaxInt32}, Calls: 1 << 50},
	}}}
	odd.Canonicalize()
	labelled := build("main.main;main.serve 900 1 3")
	labelled.Meta = Meta{Mode: ModeExact, MetricVersion: MetricVersion, Program: "srv",
		Metric: "cost", MetricTable: "linux-amd64 1a2b3c4d",
		Labels: []Label{{"env", ""}, {"service", "api"}, {"version", "v1.2.3"}}}
	labelsOnly := build("f 7")
	labelsOnly.Meta.Labels = []Label{{"k", "v"}}
	return map[string]*Profile{
		"labelled":    labelled,
		"labels-only": labelsOnly,
		"zero":        {},
		"empty":       build(),
		"one":         build("f 7"),
		"full":        full,
		"huge":        huge,
		"odd":         odd,
		"deep":        chain(100),
	}
}

func TestRoundTrip(t *testing.T) {
	for name, p := range testProfiles() {
		t.Run(name, func(t *testing.T) {
			b := encode(t, p)
			q, err := Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := p.Copy()
			want.Canonicalize()
			if !reflect.DeepEqual(q, want) {
				t.Errorf("round trip changed the profile:\ngot  %+v %s\nwant %+v %s", q.Meta, folded(q), want.Meta, folded(want))
			}
			if b2 := encode(t, q); !bytes.Equal(b, b2) {
				t.Errorf("re-encoding a parsed profile changed its bytes")
			}
		})
	}
}

// TestWriteCanonical checks that equal profiles encode identically whatever
// the order and duplication of their children, and that Write leaves a
// non-canonical profile as it was.
func TestWriteCanonical(t *testing.T) {
	want := encode(t, build("a;b 1", "a;c 2", "d 3"))
	p := build()
	p.TotalInstructions = 6
	p.Root.Children = []*Node{
		{Func: fn("d"), Instructions: 3},
		{Func: fn("a"), Children: []*Node{{Func: fn("c"), Instructions: 2}}},
		{Func: fn("a"), Children: []*Node{{Func: fn("b"), Instructions: 1}}},
	}
	before := p.Copy()
	if got := encode(t, p); !bytes.Equal(got, want) {
		t.Errorf("non-canonical profile encodes differently from its canonical form")
	}
	if !reflect.DeepEqual(p, before) {
		t.Errorf("Write modified the profile")
	}
	if got := encode(t, p); !bytes.Equal(got, want) {
		t.Errorf("second Write differs")
	}
}

func TestWriteInvalid(t *testing.T) {
	p := build("a 1")
	p.Root.Children[0].Instructions = -1
	err := p.Write(new(bytes.Buffer))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "negative instructions") {
		t.Errorf("Write(invalid) = %v, want ErrInvalid", err)
	}
	if err := p.WriteFile(filepath.Join(t.TempDir(), "x.kprof")); !errors.Is(err, ErrInvalid) {
		t.Errorf("WriteFile(invalid) = %v, want ErrInvalid", err)
	}
}

// TestLayout pins format version 1 byte for byte (package comment, # File
// format): changing it needs a new format version.
func TestLayout(t *testing.T) {
	p := build("f 7 0 1")
	p.Root.Children[0].Func = Func{Name: "f", File: "f.go", Line: 3}
	p.Meta = Meta{Mode: "exact", Granularity: 200, MetricVersion: 1, Program: "p"}
	p.TotalInstructions = 7
	want := []byte("KPROF\x01" +
		"\x05exact" + "\xc8\x01" + "\x00" + "\x00" + "\x01" + "\x00\x00\x00\x00" + "\x01p" + // meta
		"\x07\x00" + // totals
		"\x02" + "\x01f" + "\x04f.go" + // strings
		"\x01" + "\x00\x01\x03" + // functions
		"\x02" + "\x00\x00\x00\x00\x01" + "\x01\x00\x07\x01\x00") // nodes
	want = appendUint32(want, checksum(want))
	if got := encode(t, p); !bytes.Equal(got, want) {
		t.Errorf("encoding:\ngot  %q\nwant %q", got, want)
	}
}

// TestParsePrefixes checks that every proper prefix of a valid file, as left
// by an interrupted write, is rejected as corrupt.
func TestParsePrefixes(t *testing.T) {
	for name, p := range testProfiles() {
		b := encode(t, p)
		for i := range len(b) {
			_, err := Parse(bytes.NewReader(b[:i]))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: Parse of the first %d of %d bytes = %v, want ErrCorrupt", name, i, len(b), err)
			}
		}
	}
}

// TestParseDamaged checks that a file with any one byte changed is
// rejected.
func TestParseDamaged(t *testing.T) {
	for name, p := range testProfiles() {
		b := encode(t, p)
		for i := range b {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				d := bytes.Clone(b)
				d[i] ^= x
				_, err := Parse(bytes.NewReader(d))
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
					t.Fatalf("%s: Parse with byte %d ^ %#x = %v, want ErrCorrupt or ErrVersion", name, i, x, err)
				}
			}
		}
	}
}

// uv encodes varints.
func uv(xs ...uint64) []byte {
	var b []byte
	for _, x := range xs {
		b = appendUvarint(b, x)
	}
	return b
}

// str encodes strings.
func str(ss ...string) []byte {
	var b []byte
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// file joins parts and appends their checksum.
func file(parts ...[]byte) []byte {
	b := bytes.Join(parts, nil)
	return appendUint32(b, checksum(b))
}

var (
	head = bytes.Join([][]byte{[]byte(magic), uv(1), str(""), uv(0, 0, 0, 1), str("", "", "", "", "")}, nil)
	// tables with one function: f in f.go at line 3.
	oneFunc = bytes.Join([][]byte{uv(2), str("f", "f.go"), uv(1, 0, 1, 3)}, nil)
)

func TestParseRejects(t *testing.T) {
	maxU := ^uint64(0)
	valid := [][]byte{head, uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)}
	if _, err := Parse(bytes.NewReader(file(valid...))); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	tests := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrCorrupt, "offset 0: header: unexpected end of data reading magic"},
		{"not kprof", []byte("\x1f\x8b\x08 gzip"), ErrCorrupt, "not a kprof profile"},
		{"newer version", file([]byte(magic), uv(3), []byte("whatever a newer layout holds")), ErrVersion, "format version 3"},
		{"version 2 without its fields", file([]byte(magic), uv(2), head[len(magic)+1:], str("", ""), uv(0), uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "such a profile is written in version 1"},
		{"labels out of order", file([]byte(magic), uv(2), head[len(magic)+1:], str("", ""), uv(2), str("b", "", "a", ""), uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrInvalid, "labels not sorted"},
		{"empty label key", file([]byte(magic), uv(2), head[len(magic)+1:], str("", ""), uv(1), str("", "v"), uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrInvalid, "empty key"},
		{"table without metric", file([]byte(magic), uv(2), head[len(magic)+1:], str("", "t"), uv(1), str("k", "v"), uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrInvalid, "without a metric"},
		{"huge version", []byte(magic + "\xff\xff\xff\xff\x0f"), ErrVersion, "format version 4294967295"},
		{"version 0", file([]byte(magic), uv(0)), ErrCorrupt, "format version 0"},
		{"non-minimal varint", file([]byte(magic), []byte{0x81, 0x00}), ErrCorrupt, "offset 5: header: format version is not a minimal varint"},
		{"varint overflow", file([]byte(magic), bytes.Repeat([]byte{0xff}, 11)), ErrCorrupt, "overflows 64 bits"},
		{"string longer than input", file([]byte(magic), uv(1, 1000), []byte("exact")), ErrCorrupt, "offset 6: meta: mode length 1000 is more than the 9 remaining bytes"},
		{"count beyond int64", file(head, uv(1<<63, 0)), ErrCorrupt, "total instructions 9223372036854775808 overflows int64"},
		{"seed is full width", file(head[:len(head)-7], uv(maxU), head[len(head)-6:], uv(0, 0, 0, 0, 1, 0, 0, 0, 0, 0)), nil, ""},
		{"absurd string count", file(head, uv(0, 0), uv(1<<40)), ErrCorrupt, "string count 1099511627776 is more than"},
		{"unsorted strings", file(head, uv(0, 0), uv(2), str("f.go", "f"), uv(1, 1, 0, 3), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, `strings 1: string "f" is not after string 0`},
		{"duplicate strings", file(head, uv(0, 0), uv(2), str("f", "f"), uv(1, 0, 1, 3), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "not after"},
		{"unused string", file(head, uv(0, 0), uv(3), str("f", "f.go", "g"), uv(1, 0, 1, 3), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "strings 2: not used by any function"},
		{"name index out of range", file(head, uv(0, 0), uv(2), str("f", "f.go"), uv(1, 2, 1, 3), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "functions 0: name string index 2 out of range"},
		{"line beyond int", file(head, uv(0, 0), uv(2), str("f", "f.go"), uv(1, 0, 1, 1<<63), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "overflows int"},
		{"duplicate functions", file(head, uv(0, 0), uv(2), str("f", "f.go"), uv(2, 0, 1, 3, 0, 1, 3), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "functions 1: not after function 0"},
		{"unused function", file(head, uv(0, 0), uv(2), str("f", "f.go"), uv(2, 0, 1, 3, 0, 1, 4), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "functions 1: not used by any node"},
		{"absurd node count", file(head, uv(0, 0), oneFunc, uv(1<<40)), ErrCorrupt, "node count 1099511627776 is more than"},
		{"no root", file(head, uv(0, 0), uv(0, 0, 0)), ErrCorrupt, "no root node"},
		{"root with function", file(head, uv(0, 0), oneFunc, uv(2, 1, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrCorrupt, "nodes 0: the root has function 1"},
		{"child without function", file(head, uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 0, 0, 7, 0, 0)), ErrCorrupt, "nodes 1: no function"},
		{"function out of range", file(head, uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 2, 0, 7, 0, 0)), ErrCorrupt, "function 2 out of range"},
		{"duplicate siblings", file(head, uv(0, 0), oneFunc, uv(3, 0, 0, 0, 0, 2, 1, 0, 7, 0, 0, 1, 0, 1, 0, 0)), ErrCorrupt, "nodes 2: function 1 follows its sibling's function 1"},
		{"more children than nodes", file(head, uv(0, 0), oneFunc, uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 1), uv(0, 0, 0, 0, 0)), ErrCorrupt, "nodes 1: 1 children, but only 0"},
		{"fewer nodes than counted", file(head, uv(0, 0), oneFunc, uv(3, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0), uv(0, 0, 0, 0, 0)), ErrCorrupt, "the tree ends after 2 nodes, but the count says 3"},
		{"missing checksum", bytes.Join(valid, nil), ErrCorrupt, "unexpected end of data reading the checksum"},
		{"trailing data", append(file(valid...), 0), ErrCorrupt, "1 bytes of trailing data"},
		{"checksum mismatch", append(bytes.Join(valid, nil), 1, 2, 3, 4), ErrCorrupt, "checksum mismatch"},
		{"root with counts", file(head, uv(0, 0), oneFunc, uv(2, 0, 0, 5, 0, 1, 1, 0, 7, 0, 0)), ErrInvalid, "root node has counts"},
		{"empty function name", file(head, uv(0, 0), uv(2), str("", "f.go"), uv(1, 0, 1, 3), uv(2, 0, 0, 0, 0, 1, 1, 0, 7, 0, 0)), ErrInvalid, "empty function name"},
		{"sum overflow", file(head, uv(0, 0), uv(3), str("f", "f.go", "g"), uv(2, 0, 1, 3, 2, 1, 3),
			uv(3, 0, 0, 0, 0, 2, 1, 0, math.MaxInt64, 0, 0, 2, 0, 1, 0, 0)), ErrInvalid, "sum of instructions over all nodes overflows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(bytes.NewReader(tt.data))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if p != nil || !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Parse = %v, %v; want %v with %q", p, err, tt.want, tt.msg)
			}
			if tt.want == ErrInvalid && !errors.Is(err, ErrCorrupt) {
				t.Errorf("an invalid profile in a file should be ErrCorrupt too: %v", err)
			}
			if tt.want == ErrCorrupt && !strings.Contains(err.Error(), "at byte offset") {
				t.Errorf("error does not name the byte offset: %v", err)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestParseReadError(t *testing.T) {
	if _, err := Parse(failingReader{}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Parse(failing reader) = %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prof.kprof")
	p := testProfiles()["full"]
	for range 2 { // the second write replaces the first
		if err := p.WriteFile(path); err != nil {
			t.Fatal(err)
		}
	}
	q, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameProfile(t, q, p)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the profile", len(entries))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}

	if err := p.WriteFile(filepath.Join(dir, "missing", "prof.kprof")); err == nil {
		t.Errorf("WriteFile into a missing directory succeeded")
	}
	if _, err := ParseFile(filepath.Join(dir, "missing.kprof")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile(missing) = %v", err)
	}
	bad := filepath.Join(dir, "bad.kprof")
	os.WriteFile(bad, []byte("KPROF"), 0o644)
	if _, err := ParseFile(bad); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
		t.Errorf("ParseFile(bad) = %v, want ErrCorrupt naming the file", err)
	}
}

// TestWriteFileSpecial: WriteFile writes into a named pipe or a device
// (KPROF_OUT=/dev/null) instead of renaming a file over it, and through a
// symbolic link, which it keeps.
func TestWriteFileSpecial(t *testing.T) {
	dir := t.TempDir()
	p := testProfiles()["full"]
	want := encode(t, p)

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		data, err := os.ReadFile(fifo)
		if err != nil {
			t.Error(err)
		}
		got <- data
	}()
	if err := p.WriteFile(fifo); err != nil {
		t.Fatal(err)
	}
	if data := <-got; !bytes.Equal(data, want) {
		t.Errorf("read %d bytes from the pipe, want the profile's %d", len(data), len(want))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is now %v (%v)", fi.Mode(), err)
	}

	if err := p.WriteFile(os.DevNull); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is now %v (%v)", os.DevNull, fi.Mode(), err)
	}

	target := filepath.Join(dir, "target.kprof")
	link := filepath.Join(dir, "link.kprof")
	if err := os.Symlink("target.kprof", link); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteFile(link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is now %v (%v)", fi.Mode(), err)
	}
	if data, err := os.ReadFile(target); err != nil || !bytes.Equal(data, want) {
		t.Errorf("the link's target holds %d bytes (%v), want the profile", len(data), err)
	}
}
