package main

import (
	"debug/elf"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestFastPathInstructions disassembles an instrumented function and checks
// the machine code of every granularity check: a compare of the counter in
// the goroutine's g (register R14) with zero, a conditional branch to the
// out-of-line slow path, and the block's charge as a subtraction from the
// same memory — three instructions, no call. (The compiler may put a NOP
// inline mark in between; NOPs are reported, not counted.)
func TestFastPathInstructions(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/many", "-pkgs", "main")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	var fn elf.Symbol
	for _, s := range syms {
		if s.Name == "main.work" {
			fn = s
		}
	}
	if fn.Size == 0 {
		t.Fatal("main.work not found")
	}
	code := data[fn.Value-text.Addr : fn.Value-text.Addr+fn.Size]
	var insts []x86asm.Inst
	for len(code) > 0 {
		in, err := x86asm.Decode(code, 64)
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, in)
		code = code[in.Len:]
	}
	isNop := func(in x86asm.Inst) bool { return in.Op == x86asm.NOP }
	onG := func(a x86asm.Arg) bool {
		m, ok := a.(x86asm.Mem)
		return ok && m.Base == x86asm.R14 && m.Disp != 0x10 // 0x10(R14): the stack guard
	}
	checks, charged := 0, 0
	for i, in := range insts {
		if in.Op != x86asm.CMP || !onG(in.Args[0]) {
			continue
		}
		if imm, ok := in.Args[1].(x86asm.Imm); !ok || imm != 0 {
			continue
		}
		checks++
		// The branch follows the compare (NOPs apart).
		j := i + 1
		for j < len(insts) && isNop(insts[j]) {
			j++
		}
		if j == len(insts) || !strings.HasPrefix(insts[j].Op.String(), "J") {
			t.Errorf("check %d: %v is followed by %v, not a branch", checks, in, insts[j])
			continue
		}
		// On the fast path the branch jumps over the slow path to the
		// charge: find it by address.
		target := int64(0)
		if rel, ok := insts[j].Args[0].(x86asm.Rel); ok {
			target = offsetOf(insts, j+1) + int64(rel)
		}
		// The charge follows on the fast path, before the next branch or
		// call (the compiler may schedule the block's own instructions
		// around it).
		k := indexAt(insts, target)
		if k < 0 {
			t.Errorf("check %d: branch target %#x not in the function", checks, target)
			continue
		}
		nops := 0
		var ch x86asm.Inst
		found := false
		for ; k < len(insts); k++ {
			c := insts[k]
			if isNop(c) {
				nops++
				continue
			}
			if (c.Op == x86asm.ADD || c.Op == x86asm.SUB || c.Op == x86asm.DEC) && onG(c.Args[0]) {
				ch, found = c, true
				break
			}
			if c.Op == x86asm.CALL || c.Op == x86asm.RET || strings.HasPrefix(c.Op.String(), "J") {
				break
			}
		}
		if !found {
			t.Errorf("check %d: no charge on the fast path before %v", checks, insts[min(k, len(insts)-1)])
			continue
		}
		charged++
		// compare + branch + charge, NOPs not counted.
		t.Logf("check %d: %v; %v; %v (3 instructions, +%d NOP)", checks, in, insts[j], ch, nops+(j-i-1))
	}
	if checks == 0 || charged == 0 {
		t.Fatalf("found %d checks, %d with their charge, in main.work", checks, charged)
	}
}

func offsetOf(insts []x86asm.Inst, i int) int64 {
	var off int64
	for _, in := range insts[:i] {
		off += int64(in.Len)
	}
	return off
}

func indexAt(insts []x86asm.Inst, off int64) int {
	var cur int64
	for i, in := range insts {
		if cur == off {
			return i
		}
		cur += int64(in.Len)
	}
	return -1
}
