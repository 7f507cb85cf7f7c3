package edit

import (
	"go/token"
	"testing"
)

func TestBuffer(t *testing.T) {
	const src = "package p\n\nfunc f() int { return g(1) }\n"
	pos := func(tf *token.File, s string) token.Pos {
		for i := range len(src) - len(s) + 1 {
			if src[i:i+len(s)] == s {
				return tf.Pos(i)
			}
		}
		t.Fatalf("%q not in the source", s)
		return token.NoPos
	}
	for _, tc := range []struct {
		name string
		edit func(b *Buffer, tf *token.File)
		want string
	}{
		{"none", func(*Buffer, *token.File) {}, "//line p.go:1:1\n" + src},
		{
			"ranks at one offset",
			func(b *Buffer, tf *token.File) {
				at := pos(tf, "return")
				b.Insert(at, 2, "B; ")
				b.Insert(at, 1, "A; ")
				b.Insert(at, 2, "C; ")
			},
			"//line p.go:1:1\npackage p\n\nfunc f() int { A; B; C; /*line p.go:3:16*/return g(1) }\n",
		},
		{
			"replace and wrap",
			func(b *Buffer, tf *token.File) {
				call := pos(tf, "g(1)")
				b.Replace(call, call+1, 1, "h")
				b.Insert(call, 0, "wrap(")
				b.Insert(call+4, 0, ")")
			},
			"//line p.go:1:1\npackage p\n\nfunc f() int { return wrap(h/*line p.go:3:24*/(1))/*line p.go:3:27*/ }\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			tf := fset.AddFile("p.go", -1, len(src))
			tf.SetLinesForContent([]byte(src))
			b := NewBuffer(tf, []byte(src), "p.go")
			tc.edit(b, tf)
			if got := string(b.Bytes("")); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
