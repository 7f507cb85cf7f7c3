package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// everyRun runs bin with env and KPROF_OUT=dir/e.kprof and returns the
// end-of-run profile's bytes and the delta files' (e.1.kprof, …), each
// checked valid.
func everyRun(t *testing.T, bin string, env ...string) (end []byte, files [][]byte) {
	t.Helper()
	dir := t.TempDir()
	if out, err := runCmd("", append(env, "KPROF_OUT="+filepath.Join(dir, "e.kprof")), bin); err != nil {
		t.Fatalf("%v: %v\n%s", env, err, out)
	}
	end, err := os.ReadFile(filepath.Join(dir, "e.kprof"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; ; n++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("e.%d.kprof", n)))
		if os.IsNotExist(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := profile.Parse(bytes.NewReader(b)); err != nil {
			t.Fatalf("%v: e.%d.kprof: %v", env, n, err)
		}
		files = append(files, b)
	}
	return end, files
}

// mergeBytes returns the encoded merge of the encoded profiles.
func mergeBytes(t *testing.T, files [][]byte) []byte {
	t.Helper()
	var ps []*profile.Profile
	for _, b := range files {
		p, err := profile.Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	m, err := profile.Merge(ps...)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// selfOf returns the instructions of the contexts that end in fn.
func selfOf(t *testing.T, b []byte, fn string) int64 {
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Flat() {
		if s.Func.Name == fn {
			return s.Self
		}
	}
	return 0
}

// TestEvery: KPROF_EVERY=N writes a delta profile each time the program's
// sampled instructions reach a multiple of N. For a deterministic program
// with one goroutine, two runs write byte-identical files, in exact and in
// sample mode and whatever GOMAXPROCS; the files follow the program's
// phases, merge to the end-of-run profile byte for byte, and that profile
// is the one written without KPROF_EVERY. For a deterministic program
// whose goroutines count at the same time, the files still merge to the
// end-of-run profile, which is still the one written without KPROF_EVERY.
// Invalid settings stop the program with one line.
func TestEvery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented programs")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/every")
	const n = 4000000

	t.Run("settings", func(t *testing.T) {
		for _, tc := range []struct{ env, want string }{
			{"KPROF_EVERY=1000", `kprof: KPROF_EVERY="1000": want a number of instructions of at least 1000000`},
			{"KPROF_EVERY=1e9", `kprof: KPROF_EVERY="1e9": want a number of instructions of at least 1000000`},
			{"KPROF_EVERY=1000000\x00KPROF_INTERVAL=1s", `kprof: KPROF_EVERY="1000000" and KPROF_INTERVAL="1s": both write <KPROF_OUT stem>.<n>.kprof, set one`},
			{"KPROF_EVERY=1000000\x00KPROF_MODE=off", `kprof: KPROF_EVERY="1000000": KPROF_MODE=off has no profile to write`},
		} {
			out, err := runCmd(t.TempDir(), strings.Split(tc.env, "\x00"), bin)
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Errorf("%q: %v, want exit status 2", tc.env, err)
			}
			if out != tc.want+"\n" {
				t.Errorf("%q: output %q, want %q", tc.env, out, tc.want+"\n")
			}
		}
	})

	for _, mode := range []string{"exact", "sample"} {
		t.Run(mode, func(t *testing.T) {
			plain, _ := everyRun(t, bin, "KPROF_MODE="+mode)
			end, files := everyRun(t, bin, "KPROF_MODE="+mode, fmt.Sprintf("KPROF_EVERY=%d", n), "GOMAXPROCS=1")
			p, err := profile.Parse(bytes.NewReader(end))
			if err != nil {
				t.Fatal(err)
			}
			// One file per multiple of N the samples reached, and the
			// last one at the end. In exact mode a sample reports all a
			// loop without calls ran, which may pass several multiples.
			if most := int(p.TotalInstructions/n) + 1; len(files) > most || len(files) < 2 || mode == "sample" && len(files) != most {
				t.Errorf("%d files for %d instructions, want %d", len(files), p.TotalInstructions, most)
			}
			if !bytes.Equal(end, plain) {
				t.Errorf("the end-of-run profile differs from the one written without KPROF_EVERY")
			}
			if !bytes.Equal(mergeBytes(t, files), end) {
				t.Errorf("the %d files do not merge to the end-of-run profile", len(files))
			}
			end2, files2 := everyRun(t, bin, "KPROF_MODE="+mode, fmt.Sprintf("KPROF_EVERY=%d", n), "GOMAXPROCS=2")
			if !bytes.Equal(end2, end) || len(files2) != len(files) {
				t.Fatalf("second run: %d files, end-of-run profile equal: %v; first run: %d files", len(files2), bytes.Equal(end2, end), len(files))
			}
			for i := range files {
				if !bytes.Equal(files[i], files2[i]) {
					t.Errorf("e.%d.kprof differs between the runs", i+1)
				}
			}
			// The phases in order: fill and checksum in the first file
			// only, the sort in the last ones only.
			first, last := files[0], files[len(files)-2]
			if selfOf(t, first, "main.fill") == 0 || selfOf(t, first, "main.insertionSort") != 0 ||
				selfOf(t, last, "main.fill") != 0 || selfOf(t, last, "main.insertionSort") == 0 {
				t.Errorf("first file: fill %d, sort %d; last full file: fill %d, sort %d",
					selfOf(t, first, "main.fill"), selfOf(t, first, "main.insertionSort"),
					selfOf(t, last, "main.fill"), selfOf(t, last, "main.insertionSort"))
			}
			// In sample mode, each full file holds N instructions, give
			// or take a sample's.
			for i, b := range files[:len(files)-1] {
				q, _ := profile.Parse(bytes.NewReader(b))
				if d := q.TotalInstructions - n; mode == "sample" && (d <= -10100 || d >= 10100) {
					t.Errorf("e.%d.kprof: %d instructions, want N=%d give or take a sample", i+1, q.TotalInstructions, n)
				}
			}
		})
	}

	// Goroutines that count at the same time: where the files split
	// depends on the scheduler, what they add up to does not.
	t.Run("goroutines", func(t *testing.T) {
		bin := kprofBuild(t, kprofBin, "../../testdata/determinism")
		for _, mode := range []string{"exact", "sample"} {
			plain, _ := everyRun(t, bin, "KPROF_MODE="+mode)
			end, files := everyRun(t, bin, "KPROF_MODE="+mode, "KPROF_EVERY=1000000", "GOMAXPROCS=2")
			if len(files) < 2 {
				t.Errorf("%s: %d files, want several", mode, len(files))
			}
			if !bytes.Equal(end, plain) {
				t.Errorf("%s: the end-of-run profile differs from the one written without KPROF_EVERY", mode)
			}
			if !bytes.Equal(mergeBytes(t, files), end) {
				t.Errorf("%s: the %d files do not merge to the end-of-run profile", mode, len(files))
			}
		}
	})
}
