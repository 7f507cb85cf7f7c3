package profile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, fails only with ErrCorrupt or
// ErrVersion, and that what it accepts is a canonical encoding: writing the
// profile gives the input back. Package overlap fuzzes its measures on
// this corpus.
func FuzzParse(f *testing.F) {
	ps := testProfiles()
	for _, name := range slices.Sorted(maps.Keys(ps)) {
		f.Add(encode(f, ps[name]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
		// Almost every mutation breaks the checksum; with the checksum
		// recomputed it reaches the rest of the decoder.
		if len(data) >= checksumSize {
			checkParse(t, file(data[:len(data)-checksumSize]))
		}
	})
}

func checkParse(t *testing.T, data []byte) {
	p, err := Parse(bytes.NewReader(data))
	if err != nil {
		if p != nil || !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("Parse = %v, %v; want nil and ErrCorrupt or ErrVersion", p, err)
		}
		return
	}
	out := encode(t, p)
	if !bytes.Equal(out, data) {
		t.Fatalf("re-encoding changed the bytes:\nin  %q\nout %q", data, out)
	}
	q, err := Parse(bytes.NewReader(out))
	if err != nil || !reflect.DeepEqual(p, q) {
		t.Fatalf("re-parse: %v, equal %v", err, reflect.DeepEqual(p, q))
	}
	if m, err := Merge(p, q); err == nil {
		if err := m.CheckValid(); err != nil {
			t.Fatalf("Merge result invalid: %v", err)
		}
	}
	p.Flat()
}

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the hand-made seeds in testdata/fuzz/FuzzParse")

// corpusSeeds are the hand-made seeds of FuzzParse's committed corpus: valid
// encodings of the test profiles, and corrupt variants of one of them.
func corpusSeeds(t *testing.T) map[string][]byte {
	seeds := map[string][]byte{}
	for name, p := range testProfiles() {
		seeds["valid-"+name] = encode(t, p)
	}
	full := seeds["valid-full"]
	seeds["corrupt-truncated"] = full[:len(full)/2]
	seeds["corrupt-checksum"] = append(bytes.Clone(full[:len(full)-1]), full[len(full)-1]^1)
	seeds["corrupt-newer-version"] = file([]byte(magic), uv(3), full[6:len(full)-4])
	seeds["corrupt-trailing"] = append(bytes.Clone(full), 0)
	seeds["corrupt-not-kprof"] = []byte("\x1f\x8b\x08\x00 gzip, not kprof")
	return seeds
}

// TestFuzzCorpus keeps the committed seeds meaningful: the valid ones must
// still parse and the corrupt ones fail, or the corpus is stale (run with
// -write-corpus after a deliberate format change).
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	seeds := corpusSeeds(t)
	if *writeCorpus {
		os.MkdirAll(dir, 0o755)
		for name, data := range seeds {
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data)))
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, want := range seeds {
		content, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("seed %s: %v (run go test -run TestFuzzCorpus -write-corpus)", name, err)
			continue
		}
		lines := strings.Split(string(content), "\n")
		got, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil || got != string(want) {
			t.Errorf("seed %s is stale (run go test -run TestFuzzCorpus -write-corpus)", name)
		}
		_, err = Parse(strings.NewReader(got))
		if valid := strings.HasPrefix(name, "valid-"); valid != (err == nil) {
			t.Errorf("seed %s: Parse error %v", name, err)
		}
	}
}
