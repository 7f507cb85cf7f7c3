package overlap

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// FuzzMeasures checks the measures on every profile the decoder accepts:
// no panic, a profile compared with itself is at 100 and without
// differences, and the measures leave their arguments alone. It is seeded
// with this package's test profiles and with the committed corpus of the
// profile decoder's fuzz test.
func FuzzMeasures(f *testing.F) {
	ps := testProfiles()
	for _, name := range slices.Sorted(maps.Keys(ps)) {
		f.Add(encode(f, ps[name]))
	}
	for _, seed := range decoderCorpus(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		before := p.Copy()
		if c, fn := Contexts(p, p), Functions(p, p); c != 100 || fn != 100 {
			t.Fatalf("overlap with itself: contexts %v, functions %v", c, fn)
		}
		if !Identical(p, p) {
			t.Fatal("not Identical to itself")
		}
		if d := Diff(p, p, 0); d != nil {
			t.Fatalf("Diff with itself = %v", d)
		}
		empty := build()
		if c := Contexts(p, empty); c != 0 && c != 100 {
			t.Fatalf("overlap with an empty profile = %v", c)
		}
		Size(p)
		if !reflect.DeepEqual(p, before) {
			t.Fatal("the measures modified their argument")
		}
	})
}

// decoderCorpus returns the seeds committed for package profile's
// FuzzParse (files in the go test fuzz v1 format holding one []byte).
func decoderCorpus(tb testing.TB) [][]byte {
	dir := filepath.Join("..", "profile", "testdata", "fuzz", "FuzzParse")
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, e := range entries {
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(content), "\n")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(rest, "[]byte(")), ")"))
		if err != nil {
			tb.Fatalf("%s: %v", e.Name(), err)
		}
		seeds = append(seeds, []byte(s))
	}
	if len(seeds) == 0 {
		tb.Fatalf("no seeds in %s", dir)
	}
	return seeds
}
