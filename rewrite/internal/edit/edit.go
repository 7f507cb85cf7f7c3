// Package edit applies text edits to a Go source file so that the original
// text keeps its positions: every insertion goes where it belongs in the
// original's lines, and a /*line*/ comment after it restores the column
// (and file and line) of the original text that follows, so that compile
// errors, panics and pprof show the user's file:line. The file starts with
// a //line directive naming the original file.
//
// Insertions at the same offset are ordered by rank, then by the order
// they were made; what the ranks mean is the caller's business.
package edit

import (
	"bytes"
	"fmt"
	"go/token"
	"sort"
)

// An insertion is text placed at a byte offset of the original file.
type insertion struct {
	off  int
	rank int
	seq  int
	text string
	skip int // bytes of the original text replaced by text
}

// Buffer collects the edits of one file.
type Buffer struct {
	tf       *token.File
	src      []byte
	filename string // original file name for line directives
	ins      []insertion
}

// NewBuffer returns a buffer for the file tf, whose text is src, named
// filename in the line directives.
func NewBuffer(tf *token.File, src []byte, filename string) *Buffer {
	return &Buffer{tf: tf, src: src, filename: filename}
}

// Offset returns p's byte offset in the original text.
func (b *Buffer) Offset(p token.Pos) int { return b.tf.Offset(p) }

// Text returns the original text of [p, end).
func (b *Buffer) Text(p, end token.Pos) string {
	return string(b.src[b.Offset(p):b.Offset(end)])
}

// Insert inserts text at p.
func (b *Buffer) Insert(p token.Pos, rank int, text string) {
	b.ins = append(b.ins, insertion{off: b.Offset(p), rank: rank, seq: len(b.ins), text: text})
}

// Replace replaces the original text [p, end) with text.
func (b *Buffer) Replace(p, end token.Pos, rank int, text string) {
	b.ins = append(b.ins, insertion{off: b.Offset(p), rank: rank, seq: len(b.ins), text: text, skip: b.Offset(end) - b.Offset(p)})
}

// Bytes returns the edited source, prefix first, then the //line
// directive.
func (b *Buffer) Bytes(prefix string) []byte {
	sort.SliceStable(b.ins, func(i, j int) bool {
		x, y := b.ins[i], b.ins[j]
		if x.off != y.off {
			return x.off < y.off
		}
		if x.rank != y.rank {
			return x.rank < y.rank
		}
		return x.seq < y.seq
	})
	var buf bytes.Buffer
	buf.WriteString(prefix)
	fmt.Fprintf(&buf, "//line %s:1:1\n", b.filename)
	last := 0
	for i, in := range b.ins {
		buf.Write(b.src[last:in.off])
		last = in.off + in.skip
		buf.WriteString(in.text)
		// Restore the column of the original text that follows.
		if i+1 == len(b.ins) || b.ins[i+1].off != in.off {
			// The position the text that follows had, //line directives
			// of the original (cgo's output has them) included.
			pos := b.tf.PositionFor(b.tf.Pos(last), true)
			if pos.Column == 0 {
				// Under a directive that gave no column (ragel's and
				// goyacc's output: "//line parser.y:12"), none is known;
				// the compiler refuses column 0.
				fmt.Fprintf(&buf, "/*line %s:%d*/", pos.Filename, pos.Line)
			} else {
				fmt.Fprintf(&buf, "/*line %s:%d:%d*/", pos.Filename, pos.Line, pos.Column)
			}
		}
	}
	buf.Write(b.src[last:])
	return buf.Bytes()
}
