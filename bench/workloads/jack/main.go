// Command jack is the kprof evaluation workload in the role of SPEC JVM98
// _228_jack (a parser generator): lexer- and parser-heavy text processing.
// Each round generates a small program model, renders it to source text with
// text/template (the template itself is parsed every round), tokenizes the
// text with a regexp-based lexer, parses it with a recursive-descent parser
// and interprets the functions with 64-bit wrapping integer arithmetic.
//
// Usage: jack [-n rounds]. Each unit of -n is one generated program of 40
// functions. The program prints one deterministic checksum line.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const funcsPerRound = 40

const srcTemplate = `{{/* program template */}}
{{- define "stmt" -}}
{{- if .Cond}}  if {{.Target}} > {{.Bound}} { {{.Target}} = {{.Expr}}; }
{{- else}}  {{.Target}} = {{.Expr}};
{{- end}}
{{end -}}
{{- define "func" -}}
// {{.Name | printf "%q"}} has {{len .Stmts}} statements.
func {{.Name}}({{join .Params ", "}}) {
{{range .Stmts}}{{template "stmt" .}}{{end -}}
{{"  "}}return {{.Ret}};
}
{{end -}}
// program {{.Name}} generated for round {{.Round}}
{{range $i, $f := .Funcs}}{{if eq (mod $i 8) 0}}// section {{$i}}
{{end}}{{template "func" $f}}{{end -}}
`

// Program is the model rendered by the template.
type Program struct {
	Name  string
	Round int
	Funcs []Func
}

// Func is one generated function.
type Func struct {
	Name   string
	Params []string
	Stmts  []Stmt
	Ret    string
}

// Stmt is an assignment, optionally guarded.
type Stmt struct {
	Cond   bool
	Target string
	Bound  int
	Expr   string
}

var vars = []string{"a", "b", "c", "x", "y", "z"}

func genExpr(r *rand.Rand, d int) string {
	if d == 0 || r.IntN(4) == 0 {
		if r.IntN(3) == 0 {
			return strconv.Itoa(r.IntN(1000))
		}
		return vars[r.IntN(len(vars))]
	}
	ops := []string{"+", "-", "*", "/", "%", "&", "|", "^", "+", "*"}
	op := ops[r.IntN(len(ops))]
	if r.IntN(3) == 0 {
		return "(" + genExpr(r, d-1) + " " + op + " " + genExpr(r, d-1) + ")"
	}
	return genExpr(r, d-1) + " " + op + " " + genExpr(r, d-1)
}

func genProgram(r *rand.Rand, round int) *Program {
	p := &Program{Name: fmt.Sprintf("prog%d", round), Round: round}
	for i := 0; i < funcsPerRound; i++ {
		f := Func{Name: fmt.Sprintf("f%d_%d", round, i), Params: []string{"a", "b", "c"}}
		for k := 6 + r.IntN(12); k > 0; k-- {
			f.Stmts = append(f.Stmts, Stmt{
				Cond:   r.IntN(3) == 0,
				Target: vars[r.IntN(len(vars))],
				Bound:  r.IntN(500),
				Expr:   genExpr(r, 4),
			})
		}
		f.Ret = genExpr(r, 2)
		p.Funcs = append(p.Funcs, f)
	}
	return p
}

// Token kinds, in the order of the lexer's capture groups.
const (
	tkSpace = iota
	tkComment
	tkNumber
	tkIdent
	tkPunct
	tkEOF
)

var lexRE = regexp.MustCompile(`(\s+)|(//[^\n]*)|([0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/%&|^<>=(){};,])`)

var funcRE = regexp.MustCompile(`(?m)^func ([a-z0-9_]+)\(([a-z, ]*)\) \{$`)

type token struct {
	kind int
	text string
}

func lex(src string) []token {
	var toks []token
	pos := 0
	for _, m := range lexRE.FindAllStringSubmatchIndex(src, -1) {
		if m[0] != pos {
			fail("lex: unexpected %q at %d", src[pos:m[0]], pos)
		}
		pos = m[1]
		for g := 1; g*2 < len(m); g++ {
			if m[2*g] >= 0 {
				if k := g - 1; k != tkSpace && k != tkComment {
					toks = append(toks, token{k, src[m[2*g]:m[2*g+1]]})
				}
				break
			}
		}
	}
	if pos != len(src) {
		fail("lex: trailing %q", src[pos:])
	}
	return append(toks, token{tkEOF, ""})
}

// Expression tree.
type node struct {
	op          byte // 0 for leaves
	left, right *node
	name        string
	val         int64
}

type stmt struct {
	cond   bool
	target string
	bound  int64
	expr   *node
}

type function struct {
	name   string
	params []string
	body   []stmt
	ret    *node
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) expect(text string) {
	if t := p.next(); t.text != text {
		fail("parse: want %q, got %q", text, t.text)
	}
}

func (p *parser) ident() string {
	t := p.next()
	if t.kind != tkIdent {
		fail("parse: want identifier, got %q", t.text)
	}
	return t.text
}

var prec = map[string]int{"|": 1, "^": 2, "&": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}

// expr parses a binary expression by precedence climbing.
func (p *parser) expr(minPrec int) *node {
	left := p.primary()
	for {
		t := p.peek()
		pr, ok := prec[t.text]
		if t.kind != tkPunct || !ok || pr < minPrec {
			return left
		}
		p.next()
		right := p.expr(pr + 1)
		left = &node{op: t.text[0], left: left, right: right}
	}
}

func (p *parser) primary() *node {
	t := p.next()
	switch t.kind {
	case tkNumber:
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			fail("parse: %v", err)
		}
		return &node{val: v}
	case tkIdent:
		return &node{name: t.text}
	}
	if t.text == "(" {
		e := p.expr(1)
		p.expect(")")
		return e
	}
	fail("parse: unexpected %q", t.text)
	return nil
}

func (p *parser) function() function {
	p.expect("func")
	f := function{name: p.ident()}
	p.expect("(")
	for p.peek().text != ")" {
		f.params = append(f.params, p.ident())
		if p.peek().text == "," {
			p.next()
		}
	}
	p.expect(")")
	p.expect("{")
	for p.peek().text != "return" {
		var s stmt
		if p.peek().text == "if" {
			p.next()
			s.cond = true
			s.target = p.ident()
			p.expect(">")
			s.bound = p.expr(1).val
			p.expect("{")
		}
		t := p.ident()
		if s.cond && t != s.target {
			fail("parse: guarded assignment to %s, want %s", t, s.target)
		}
		s.target = t
		p.expect("=")
		s.expr = p.expr(1)
		p.expect(";")
		if s.cond {
			p.expect("}")
		}
		f.body = append(f.body, s)
	}
	p.expect("return")
	f.ret = p.expr(1)
	p.expect(";")
	p.expect("}")
	return f
}

func eval(e *node, env map[string]int64) int64 {
	if e.op == 0 {
		if e.name != "" {
			return env[e.name]
		}
		return e.val
	}
	a, b := eval(e.left, env), eval(e.right, env)
	switch e.op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	case '/':
		if b == 0 || (a == -1<<63 && b == -1) {
			return a
		}
		return a / b
	case '%':
		if b == 0 || b == -1 {
			return a
		}
		return a % b
	case '&':
		return a & b
	case '|':
		return a | b
	case '^':
		return a ^ b
	}
	fail("eval: bad operator %q", e.op)
	return 0
}

func (f *function) call(args ...int64) int64 {
	env := make(map[string]int64, 8)
	for i, name := range f.params {
		env[name] = args[i]
	}
	for _, s := range f.body {
		if s.cond && env[s.target] <= s.bound {
			continue
		}
		env[s.target] = eval(s.expr, env)
	}
	return eval(f.ret, env)
}

func main() {
	n := flag.Int("n", 120, "problem size: number of generated programs")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "jack: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	r := rand.New(rand.NewPCG(1, 2))
	funcs := template.FuncMap{
		"join": strings.Join,
		"mod":  func(a, b int) int { return a % b },
	}
	sum := fnv.New64a()
	var out bytes.Buffer
	var tokens, calls uint64
	for round := 0; round < *n; round++ {
		tmpl, err := template.New("program").Funcs(funcs).Parse(srcTemplate)
		if err != nil {
			fail("template: %v", err)
		}
		out.Reset()
		if err := tmpl.Execute(&out, genProgram(r, round)); err != nil {
			fail("execute: %v", err)
		}
		src := out.String()
		sum.Write(out.Bytes())

		headers := funcRE.FindAllStringSubmatch(src, -1)
		if len(headers) != funcsPerRound {
			fail("round %d: found %d function headers", round, len(headers))
		}
		toks := lex(src)
		tokens += uint64(len(toks))
		p := &parser{toks: toks}
		var word [8]byte
		for p.peek().kind != tkEOF {
			f := p.function()
			for k := int64(0); k < 16; k++ {
				v := f.call(k*7919+1, k-3, int64(round)*31+k*k)
				calls++
				for i := range word {
					word[i] = byte(v >> (8 * i))
				}
				sum.Write(word[:])
			}
			sum.Write([]byte(f.name))
		}
	}
	fmt.Printf("jack n=%d tokens=%d calls=%d checksum=%016x\n", *n, tokens, calls, sum.Sum64())
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "jack: "+format+"\n", args...)
	os.Exit(1)
}
