package toolexec

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Facts across packages.
//
// A call to a quiet function (quietFuncs) needs no flush or check in its
// caller. Within a package kprof knows which functions are quiet; for
// calls into other packages (strings.Compare in a comparison function,
// utf8's helpers) it needs the facts found when those packages were
// compiled. kprof build writes them into each instrumented package's
// archive, as a member the linker skips (a short name that does not end in
// .o or .syso), where the compile steps of its importers find them through
// their importcfg — as go vet's facts travel with its vetx files. The
// member is part of the archive the go command hashes and caches, so a
// rebuild that finds the archive in the cache finds the facts too, and a
// package whose facts change gets a new content ID, which rebuilds its
// importers.

// factsMember is the name of the archive member holding a package's facts.
const factsMember = "kprof.facts"

// factsHeader starts the member; a version kprof does not know is ignored.
const factsHeader = "kprof quiet facts 1\n"

// encodeFacts returns the member's text: the header, then one line per
// quiet function, "name longest-path", sorted by name.
func encodeFacts(quiet map[string]int64) []byte {
	names := make([]string, 0, len(quiet))
	for name := range quiet {
		names = append(names, name)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString(factsHeader)
	for _, name := range names {
		fmt.Fprintf(&b, "%s %d\n", name, quiet[name])
	}
	return b.Bytes()
}

// decodeFacts parses a member written by encodeFacts.
func decodeFacts(data []byte) (map[string]int64, error) {
	rest, ok := bytes.CutPrefix(data, []byte(factsHeader))
	if !ok {
		return nil, fmt.Errorf("not kprof quiet facts of this version")
	}
	quiet := make(map[string]int64)
	for _, line := range strings.Split(string(rest), "\n") {
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i <= 0 || err != nil || n < 0 {
			return nil, fmt.Errorf("malformed facts line %q", line)
		}
		quiet[line[:i]] = n
	}
	return quiet, nil
}

// appendFacts adds the facts member to the archive the compiler wrote.
func appendFacts(archive string, quiet map[string]int64) error {
	return appendMember(archive, factsMember, encodeFacts(quiet))
}

// appendMember appends a member to an archive, as the go command appends
// a cgo package's objects.
func appendMember(archive, name string, data []byte) error {
	f, err := os.OpenFile(archive, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	magic := make([]byte, len(arMagic))
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != arMagic {
		return fmt.Errorf("%s: not an archive", archive)
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if end%2 == 1 {
		b.WriteByte('\n') // members start at even offsets
	}
	fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", name, 0, 0, 0, 0o644, len(data))
	b.Write(data)
	if len(data)%2 == 1 {
		b.WriteByte('\n')
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		return err
	}
	return f.Close()
}

const arMagic = "!<arch>\n"

// archiveMembers calls f with the name and contents of each member of an
// archive until f returns false. A file that is not an archive has none.
func archiveMembers(archive string, f func(name string, data []byte) bool) error {
	file, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReader(file)
	magic := make([]byte, len(arMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != arMagic {
		return nil // not an archive (a -linkobj object)
	}
	hdr := make([]byte, 60)
	for {
		if _, err := io.ReadFull(r, hdr); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: truncated archive", archive)
		}
		name := strings.TrimRight(string(hdr[:16]), " /")
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("%s: malformed archive header", archive)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("%s: truncated archive", archive)
		}
		if !f(name, data) {
			return nil
		}
		if size%2 == 1 {
			if _, err := r.Discard(1); err != nil {
				return nil // the last member's padding may be missing
			}
		}
	}
}

// readFacts returns the facts member of an archive, or nil if it has none.
func readFacts(archive string) (map[string]int64, error) {
	var quiet map[string]int64
	var derr error
	err := archiveMembers(archive, func(name string, data []byte) bool {
		if name != factsMember {
			return true
		}
		quiet, derr = decodeFacts(data)
		return false
	})
	if err == nil && derr != nil {
		err = fmt.Errorf("%s: %v", archive, derr)
	}
	return quiet, err
}

// copyObjects appends to the archive to the members of from that are
// neither the package's export data, nor its Go object, nor its facts: the
// objects the go command adds for cgo and assembly, which a package
// compiled again (relink) must carry too.
func copyObjects(from, to string) error {
	var err error
	walkErr := archiveMembers(from, func(name string, data []byte) bool {
		switch name {
		case "__.PKGDEF", "_go_.o", factsMember:
			return true
		}
		err = appendMember(to, name, data)
		return err == nil
	})
	if err != nil {
		return err
	}
	return walkErr
}

// importFacts reads the facts of a compile step's imports on demand.
type importFacts struct {
	files map[string]string           // import path → archive (the importcfg's packagefile lines)
	read  map[string]map[string]int64 // import path → its facts (nil: none)
}

func newImportFacts(importcfg string) (*importFacts, error) {
	files, err := readImportcfg(importcfg)
	if err != nil {
		return nil, err
	}
	return &importFacts{files: files, read: make(map[string]map[string]int64)}, nil
}

// quiet implements Options.Quiet. A package whose archive cannot be read
// or holds no facts has no quiet function: its calls stay calls.
func (f *importFacts) quiet(pkg, name string) (int64, bool) {
	facts, ok := f.read[pkg]
	if !ok {
		if file, ok := f.files[pkg]; ok {
			facts, _ = readFacts(file)
		}
		f.read[pkg] = facts
	}
	n, ok := facts[name]
	return n, ok
}
