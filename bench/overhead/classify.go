package main

import (
	"bufio"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// parseCallgrind reads a callgrind output file written with
// --dump-instr=yes and returns the instructions executed at each address
// (the first event column, Ir), the functions' own costs only: the cost
// line after a calls= line is the callee's inclusive cost, and is skipped.
func parseCallgrind(r io.Reader) (map[uint64]int64, error) {
	counts := make(map[uint64]int64)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var addr uint64
	inclusive := false
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "calls=") {
			inclusive = true
			continue
		}
		if pos, ok := strings.CutPrefix(text, "positions:"); ok && !strings.HasPrefix(strings.TrimSpace(pos), "instr") {
			return nil, fmt.Errorf("callgrind output line %d: positions are %q, not instructions (run callgrind with --dump-instr=yes)", line, strings.TrimSpace(pos))
		}
		if text == "" || !strings.ContainsRune("0123456789+-*", rune(text[0])) {
			continue
		}
		fields := strings.Fields(text)
		pos := fields[0]
		switch {
		case pos == "*":
		case pos[0] == '+' || pos[0] == '-':
			d, err := strconv.ParseUint(pos[1:], 0, 64)
			if err != nil {
				return nil, fmt.Errorf("callgrind output line %d: position %q: %v", line, pos, err)
			}
			if pos[0] == '+' {
				addr += d
			} else {
				addr -= d
			}
		default:
			a, err := strconv.ParseUint(pos, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("callgrind output line %d: position %q: %v (was it written with --dump-instr=yes?)", line, pos, err)
			}
			addr = a
		}
		if inclusive {
			inclusive = false
			continue
		}
		// Positions are "instr line": the first event follows them.
		if len(fields) < 3 {
			continue
		}
		n, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("callgrind output line %d: cost %q: %v", line, fields[2], err)
		}
		counts[addr] += n
	}
	return counts, sc.Err()
}

// A category is a kind of executed instruction.
type category int

const (
	catRuntime category = iota // in the runtime (the collector and scheduler included) or the vDSO
	catCount                   // reads or writes the goroutine's instruction count
	catStack                   // reads or writes the reified stack (depth, buffer)
	catSpill                   // a move to or from a stack slot
	catBranch                  // a conditional jump
	catNop                     // a NOP (jump and loop alignment)
	catOther                   // anything else in the program's code
	numCategories
)

var categoryNames = [numCategories]string{
	"runtime (collector, scheduler)",
	"the count (charges, checks)",
	"the reified stack (push, pop, depth)",
	"moves to and from stack slots",
	"conditional jumps",
	"NOPs (alignment)",
	"other instructions",
}

// kprofFields are the offsets from the g register (R14) of the fields of
// kprof's per-goroutine state that instrumented code reaches; none in a
// plain build.
type kprofFields struct {
	count int64
	stack []int64 // depth, buffer pointer and length
}

// binary is what classification needs of an executable.
type binary struct {
	text   []byte
	base   uint64
	syms   []elf.Symbol // functions, by address
	fields *kprofFields
}

func readBinary(path string) (*binary, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("%s: not an amd64 executable", path)
	}
	sec := f.Section(".text")
	if sec == nil {
		return nil, fmt.Errorf("%s: no .text section", path)
	}
	b := &binary{base: sec.Addr}
	if b.text, err = sec.Data(); err != nil {
		return nil, err
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %v (built with -ldflags=-s?)", path, err)
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			b.syms = append(b.syms, s)
		}
	}
	sort.Slice(b.syms, func(i, j int) bool { return b.syms[i].Value < b.syms[j].Value })
	if d, err := f.DWARF(); err == nil {
		b.fields, err = kprofOffsets(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	return b, nil
}

// kprofOffsets finds the offsets of kprof's state in runtime.g from the
// debugging information, or returns nil for a plain build.
func kprofOffsets(d *dwarf.Data) (*kprofFields, error) {
	members := func(name string) (map[string]int64, error) {
		r := d.Reader()
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				return nil, err
			}
			if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != name {
				if e.Children && e.Tag != dwarf.TagCompileUnit {
					r.SkipChildren()
				}
				continue
			}
			t, err := d.Type(e.Offset)
			if err != nil {
				return nil, err
			}
			st, ok := t.(*dwarf.StructType)
			if !ok {
				return nil, fmt.Errorf("%s is not a struct", name)
			}
			m := make(map[string]int64)
			for _, f := range st.Field {
				m[f.Name] = f.ByteOffset
			}
			return m, nil
		}
	}
	g, err := members("runtime.g")
	if err != nil {
		return nil, err
	}
	base, ok := g["kprof"]
	if !ok {
		return nil, nil
	}
	k, err := members("runtime.KprofGState")
	if err != nil || k == nil {
		return nil, fmt.Errorf("runtime.g has a kprof field but runtime.KprofGState is not described: %v", err)
	}
	return &kprofFields{
		count: base + k["Count"],
		stack: []int64{base + k["Depth"], base + k["Stack"], base + k["Stack"] + 8},
	}, nil
}

// function returns the name of the function holding addr.
func (b *binary) function(addr uint64) string {
	i := sort.Search(len(b.syms), func(i int) bool { return b.syms[i].Value > addr }) - 1
	if i < 0 {
		return ""
	}
	return b.syms[i].Name
}

// classify decodes the instruction at addr and returns its category.
func (b *binary) classify(addr uint64) (category, error) {
	fn := b.function(addr)
	if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/runtime/") || strings.HasPrefix(fn, "gcWriteBarrier") {
		return catRuntime, nil
	}
	if addr < b.base || addr >= b.base+uint64(len(b.text)) {
		return catRuntime, nil // the vDSO, which the runtime calls for the time
	}
	in, err := x86asm.Decode(b.text[addr-b.base:], 64)
	if err != nil {
		// x86asm does not know every extension the compiler may use
		// (BMI2 shifts, for one): none touches kprof's state.
		return catOther, nil
	}
	return classifyInst(in, b.fields), nil
}

// classifyInst returns the category of an instruction of the program's own
// code.
func classifyInst(in x86asm.Inst, k *kprofFields) category {
	for _, a := range in.Args {
		m, ok := a.(x86asm.Mem)
		if !ok || k == nil || m.Base != x86asm.R14 || m.Index != 0 {
			continue
		}
		if m.Disp == k.count {
			return catCount
		}
		for _, off := range k.stack {
			if m.Disp == off {
				return catStack
			}
		}
	}
	switch {
	case in.Op == x86asm.NOP:
		return catNop
	case in.Op == x86asm.MOV || in.Op == x86asm.MOVZX || in.Op == x86asm.MOVSD_XMM || in.Op == x86asm.MOVUPS:
		for _, a := range in.Args {
			if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RSP {
				return catSpill
			}
		}
	case strings.HasPrefix(in.Op.String(), "J") && in.Op != x86asm.JMP:
		return catBranch
	}
	return catOther
}

// tally sums the executed instructions of b by category.
func tally(counts map[uint64]int64, b *binary) ([numCategories]int64, error) {
	var t [numCategories]int64
	for addr, n := range counts {
		c, err := b.classify(addr)
		if err != nil {
			return t, err
		}
		t[c] += n
	}
	return t, nil
}
