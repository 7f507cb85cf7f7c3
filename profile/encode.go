package profile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The file format; the package comment describes the layout.
const (
	magic         = "KPROF"
	formatVersion = 2 // the newest version, which Parse reads and Write writes when needed
	checksumSize  = 4
)

// Write writes p to w in the kprof file format. It encodes a canonical copy
// when p is not canonical (p itself is not modified), and refuses a profile
// that fails CheckValid. Equal profiles are written as identical bytes.
func (p *Profile) Write(w io.Writer) error {
	b, err := p.encode()
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	return nil
}

// WriteFile writes p to the named file atomically: it writes a temporary file
// in the same directory, syncs it and renames it over path, so readers see
// the old file or the whole new one, never a part. The file gets mode 0644.
func (p *Profile) WriteFile(path string) error {
	b, err := p.encode()
	if err != nil {
		return err
	}
	return writeFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writeFile writes the named file atomically with write: a temporary file
// in the same directory, synced and renamed over path. A path that names
// something other than a regular file (/dev/null, /dev/stdout, a named
// pipe) is written in place, not replaced; a symbolic link is followed, so
// the file it points to is replaced and the link kept.
func writeFile(path string, write func(io.Writer) error) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeInPlace(path, write)
	}
	path = followLinks(path)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write profile %s: %w", path, err)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// followLinks returns the path a chain of symbolic links at path leads to,
// whether or not that file exists yet (path itself if it is no link).
func followLinks(path string) string {
	for range 40 { // as many links as Linux follows
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		dest, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return path
}

// writeInPlace writes to the existing file at path, a device or a pipe,
// with write.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write profile %s: %w", path, err)
	}
	return nil
}

// encode returns the file bytes of p.
func (p *Profile) encode() ([]byte, error) {
	p = p.Canonical()
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("write profile: %w", err)
	}

	// The tables: every function the tree uses, once, sorted.
	funcIndex := map[Func]uint64{}
	nodes := 0
	traverse(p.Root, func(path []*Node) error {
		nodes++
		if len(path) > 1 {
			funcIndex[path[len(path)-1].Func] = 0
		}
		return nil
	}, nil)
	funcs := sortedKeys(funcIndex, compareFuncs)
	for i, f := range funcs {
		funcIndex[f] = uint64(i) + 1 // 0 stands for the root's empty Func
	}
	b := appendHeader(nil, &p.Meta, p.TotalInstructions, p.TotalSamples)
	b = appendTables(b, funcs)
	b = appendUvarint(b, uint64(nodes))
	traverse(p.Root, func(path []*Node) error {
		n := path[len(path)-1]
		var fn uint64
		if len(path) > 1 {
			fn = funcIndex[n.Func]
		}
		b = appendUvarint(b, fn)
		b = appendUvarint(b, uint64(n.Samples))
		b = appendUvarint(b, uint64(n.Instructions))
		b = appendUvarint(b, uint64(n.Calls))
		b = appendUvarint(b, uint64(len(n.Children)))
		return nil
	}, nil)
	return appendUint32(b, checksum(b)), nil
}

// appendHeader appends the magic, the format version and the metadata and
// totals of a profile (the version is 1 unless the metadata needs 2).
func appendHeader(b []byte, m *Meta, totalInstructions, totalSamples int64) []byte {
	b = append(b, magic...)
	v2 := m.Metric != "" || len(m.Labels) > 0
	b = appendUvarint(b, map[bool]uint64{false: 1, true: 2}[v2])
	b = appendString(b, m.Mode)
	b = appendUvarint(b, uint64(m.Granularity))
	b = appendUvarint(b, uint64(m.Jitter))
	b = appendUvarint(b, m.Seed)
	b = appendUvarint(b, uint64(m.MetricVersion))
	for _, s := range []string{m.KprofVersion, m.GoVersion, m.GOOS, m.GOARCH, m.Program} {
		b = appendString(b, s)
	}
	if v2 {
		b = appendString(b, m.Metric)
		b = appendString(b, m.MetricTable)
		b = appendUvarint(b, uint64(len(m.Labels)))
		for _, l := range m.Labels {
			b = appendString(b, l.Key)
			b = appendString(b, l.Value)
		}
	}
	b = appendUvarint(b, uint64(totalInstructions))
	return appendUvarint(b, uint64(totalSamples))
}

// appendTables appends the string table and the function table of a
// profile whose functions, distinct and in canonical order, are funcs.
// (The strings from the functions, not from every node: a tree has many
// more nodes than functions, and hashing strings is most of writing a big
// profile.)
func appendTables(b []byte, funcs []Func) []byte {
	strIndex := map[string]uint64{}
	for _, f := range funcs {
		strIndex[f.Name] = 0
		strIndex[f.File] = 0
	}
	strs := sortedKeys(strIndex, strings.Compare)
	for i, s := range strs {
		strIndex[s] = uint64(i)
	}
	b = appendUvarint(b, uint64(len(strs)))
	for _, s := range strs {
		b = appendString(b, s)
	}
	b = appendUvarint(b, uint64(len(funcs)))
	for _, f := range funcs {
		b = appendUvarint(b, strIndex[f.Name])
		b = appendUvarint(b, strIndex[f.File])
		b = appendUvarint(b, uint64(f.Line))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = appendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// sortedKeys returns the keys of m sorted by cmp.
func sortedKeys[K comparable](m map[K]uint64, cmp func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp)
	return keys
}
