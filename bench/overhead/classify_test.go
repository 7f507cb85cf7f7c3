package main

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// A callgrind file with --dump-instr=yes: absolute, relative and repeated
// positions, and a call whose inclusive cost must not count.
const callgrindOut = `# callgrind format
version: 1
positions: instr line
events: Ir
summary: 64

ob=(1) /tmp/prog
fl=(1) main.go
fn=(1) main.main
0x401000 10 5
+4 * 7
+3 +1 2
calls=1 0x402000 20
* * 1000
-7 -1 3
fn=(2) main.f
0x402000 20 40
+0x10 * 7
`

func TestParseCallgrind(t *testing.T) {
	got, err := parseCallgrind(strings.NewReader(callgrindOut))
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]int64{0x401000: 5 + 3, 0x401004: 7, 0x401007: 2, 0x402000: 40, 0x402010: 7}
	if len(got) != len(want) {
		t.Errorf("got %d addresses %v, want %d", len(got), got, len(want))
	}
	for a, n := range want {
		if got[a] != n {
			t.Errorf("%#x: %d instructions, want %d", a, got[a], n)
		}
	}
	if _, err := parseCallgrind(strings.NewReader("positions: line\nevents: Ir\nfn=(1) f\n10 5\n")); err == nil {
		t.Error("a file without instruction positions parsed")
	}
}

func TestClassifyInst(t *testing.T) {
	k := &kprofFields{count: 0x1c8, stack: []int64{0x1d8, 0x1e8, 0x1f0}}
	tests := []struct {
		code         string // machine code, hex
		kprof, plain category
	}{
		{"498386c8010000f9", catCount, catOther}, // ADDQ $-7, 0x1c8(R14)
		{"4983bec801000000", catCount, catOther}, // CMPQ 0x1c8(R14), $0
		{"4d8b86d8010000", catStack, catOther},   // MOVQ 0x1d8(R14), R8
		{"49398ef0010000", catStack, catOther},   // CMPQ 0x1f0(R14), CX
		{"4889442440", catSpill, catSpill},       // MOVQ AX, 0x40(SP)
		{"488b842480000000", catSpill, catSpill}, // MOVQ 0x80(SP), AX
		{"7f11", catBranch, catBranch},           // JG
		{"0f8641010000", catBranch, catBranch},   // JBE
		{"eb05", catOther, catOther},             // JMP
		{"90", catNop, catNop},                   // NOP
		{"0f1f4000", catNop, catNop},             // NOPL 0(AX)
		{"4801fe", catOther, catOther},           // ADDQ DI, SI
		{"493b6610", catOther, catOther},         // CMPQ SP, 0x10(R14): the stack guard
	}
	for _, tt := range tests {
		code, err := hex.DecodeString(tt.code)
		if err != nil {
			t.Fatal(err)
		}
		in, err := x86asm.Decode(code, 64)
		if err != nil {
			t.Fatalf("%s: %v", tt.code, err)
		}
		if in.Len != len(code) {
			t.Fatalf("%s: decoded %d of %d bytes (%v)", tt.code, in.Len, len(code), in)
		}
		if got := classifyInst(in, k); got != tt.kprof {
			t.Errorf("%v: %s, want %s", in, categoryNames[got], categoryNames[tt.kprof])
		}
		if got := classifyInst(in, nil); got != tt.plain {
			t.Errorf("%v in a plain build: %s, want %s", in, categoryNames[got], categoryNames[tt.plain])
		}
	}
}

// TestReadBinary reads a plain build of a small program, whose runtime.g
// has no kprof state.
func TestReadBinary(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("linux/amd64 only")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(len(make([]int, 10))) }\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "prog")
	if out, err := exec.Command("go", "build", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b, err := readBinary(exe)
	if err != nil {
		t.Fatal(err)
	}
	if b.fields != nil {
		t.Errorf("kprof fields %+v in a plain build", b.fields)
	}
	var addr uint64
	for _, s := range b.syms {
		if s.Name == "runtime.mallocgc" {
			addr = s.Value
		}
	}
	if addr == 0 {
		t.Fatal("no runtime.mallocgc symbol")
	}
	if fn := b.function(addr + 1); fn != "runtime.mallocgc" {
		t.Errorf("function(mallocgc+1) = %q", fn)
	}
	if c, err := b.classify(addr); err != nil || c != catRuntime {
		t.Errorf("classify(mallocgc) = %v, %v; want the runtime's", categoryNames[c], err)
	}
}
