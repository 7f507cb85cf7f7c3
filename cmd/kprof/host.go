package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/version"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kprof/kprof"
	"github.com/kprof/kprof/toolchain"
)

// The instrumenter type-checks every package it rewrites with go/types,
// which knows the language only up to the Go release it came with: a
// kprof built with Go 1.26 cannot check Go 1.27's methods with type
// parameters or composite literals that name promoted fields, in the
// user's code or in the standard library (math/rand/v2, internal/poll),
// nor import a package whose export data has them. So a build with a
// newer release than the one kprof was built with runs a kprof built from
// the same source with that release: the host.

// hostKprof returns the kprof executable that instruments a build with
// the go command of goVersion at goroot: self when self was built with a
// release at least as new, otherwise a kprof built from kprof.Source with
// that go command, into cacheDir the first time (under a minute; the
// modules kprof needs come from the module cache or proxy).
func hostKprof(self, goVersion, goroot, cacheDir string) (string, error) {
	if !newerLanguage(goVersion, runtime.Version()) {
		return self, nil
	}
	h := sha256.New()
	err := fs.WalkDir(kprof.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := kprof.Source.ReadFile(p)
		hashFile(h, p, data)
		return err
	})
	if err != nil {
		return "", err
	}
	sum := h.Sum(nil)
	release := strings.Fields(goVersion)[0] // ("go1.27.3 X:…": the wrapper's path has no space)
	dir := filepath.Join(cacheDir, "host-"+release+"-"+hex.EncodeToString(sum[:8]))
	exe := filepath.Join(dir, "kprof")
	if _, err := os.Stat(exe); err == nil {
		markUsed(dir, time.Now())
		return exe, nil
	}
	progress := newProgress(fmt.Sprintf("kprof: building kprof with %s to check its language (first time only)", release))
	defer progress.done()
	if err := os.MkdirAll(cacheDir, 0o777); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "host-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// With the tests: the host embeds kprof.Source as this kprof does, so
	// it is the very binary a checkout of this source builds with the
	// release (toolchain.KprofCommand), and shares its cached packages.
	if err := writeFiles(kprof.Source, tmp, 0o666, true); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "kprof.exe")
	cmd := toolchain.KprofCommand(goroot, tmp, out) // (tmp: kprof's go.mod and go.sum)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		// Offline, say, without the modules kprof needs: the build goes
		// on, as before, with packages this kprof cannot check left
		// uninstrumented, each named in a warning.
		progress.done()
		fmt.Fprintf(os.Stderr, "kprof: warning: kprof was built with %s and cannot check all %s code; building kprof with %s failed, so packages that use what is new in %s are not instrumented (install kprof with that release: GOTOOLCHAIN=%s go install github.com/kprof/kprof/cmd/kprof): %v\n%s\n",
			runtime.Version(), version.Lang(release), release, version.Lang(release), release, err, strings.TrimSpace(stderr.String()))
		return self, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	if err := os.Rename(out, exe); err != nil {
		return "", err
	}
	return exe, nil
}

// newerLanguage reports whether the language of Go release goVersion
// ("go1.27.3", "go1.27rc1") is newer than that of built (runtime.Version of
// kprof). A version either cannot be read from ("devel ...") compares as
// not newer.
func newerLanguage(goVersion, built string) bool {
	a, b := version.Lang(strings.Fields(goVersion + " ")[0]), version.Lang(built)
	return a != "" && b != "" && version.Compare(a, b) > 0
}

// writeFiles writes the files of fsys under dir with mode perm, the
// tests only if tests is set.
func writeFiles(fsys fs.FS, dir string, perm fs.FileMode, tests bool) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !tests && strings.HasSuffix(p, "_test.go") {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			return err
		}
		return os.WriteFile(name, data, perm)
	})
}
