package rewrite

import (
	"fmt"
	"testing"
)

// TestHoistWeights checks where block weights move (hoistWeights) and which
// functions accumulate their charges locally (FuncPlan.Local), on small
// functions: the weight of a block moves to a dominator that runs exactly
// as often, never across a call or a channel operation, and the charges of
// a function always add up to its blocks' weights.
func TestHoistWeights(t *testing.T) {
	tests := []struct {
		name  string
		body  string // of func f; g and h are helpers
		moved []string
		kept  []string
		local bool
	}{
		{
			name:  "diamond",
			body:  "func f(x int) int { y := 0; if x > 0 { y = x * 2 } else { y = x - 1 }; return y + 1 }",
			moved: []string{"if.done"},
			kept:  []string{"if.then", "if.else"},
			local: true, // a small loop-free leaf: it flushes where it returns
		},
		{
			name:  "call in a branch",
			body:  "func f(x int) int { y := 0; if x > 0 { y = g(x) }; return y + 1 }",
			kept:  []string{"if.then", "if.done"},
			local: true,
		},
		{
			name:  "loop exit",
			body:  "func f(n int) int { s := 0; for i := 0; i < n; i++ { s += i * i }; return s }",
			moved: []string{"for.done"},
			kept:  []string{"for.body", "for.loop"},
			local: true,
		},
		{
			name:  "channel receive in a branch",
			body:  "func f(c chan int, x int) int { y := g(x); if x > 0 { y = <-c }; return y }",
			kept:  []string{"if.then", "if.done"},
			local: true,
		},
		{
			name:  "early return",
			body:  "func f(x int) int { if x > 0 { return 1 }; return g(x) }",
			kept:  []string{"if.then", "if.done"},
			local: true,
		},
		{
			name:  "recover",
			body:  "func f(x int) (r int) { defer func() { recover() }(); y := 0; if x > 0 { y = 1 } else { y = 2 }; return y }",
			kept:  []string{"if.then", "if.else", "if.done"},
			local: false, // the recover block has no statement to flush at
		},
		{
			name:  "call in an operand",
			body:  "func f(x int) bool { for i := 0; i < x; i++ { if i > 3 && g(i) > 1 { return true } }; return false }",
			local: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fmt.Sprintf("package p\n\n%s\n\nfunc g(x int) int { for x > 10 { x /= 2 }; return x }\n", tt.body)
			_, out := instrument(t, "p.go", []byte(src))
			var p *FuncPlan
			for _, q := range out.Plans {
				if q.Name == "p.f" {
					p = q
				}
			}
			if p == nil {
				t.Fatal("no plan for p.f")
			}
			var sum int64
			for _, c := range p.Charged {
				sum += c
			}
			if sum != p.Total {
				t.Errorf("charged %d in all, blocks weigh %d", sum, p.Total)
			}
			byName := map[string]int{}
			for _, b := range p.Fn.Blocks {
				byName[b.Comment] = b.Index
			}
			for _, name := range tt.moved {
				i, ok := byName[name]
				if !ok {
					t.Fatalf("no block %s in %v", name, byName)
				}
				if p.Weights[i] == 0 || p.Charged[i] != 0 {
					t.Errorf("block %s (weight %d) is charged %d, want 0 (moved)", name, p.Weights[i], p.Charged[i])
				}
			}
			for _, name := range tt.kept {
				i, ok := byName[name]
				if !ok {
					t.Fatalf("no block %s in %v", name, byName)
				}
				if p.Charged[i] != p.Weights[i] {
					t.Errorf("block %s (weight %d) is charged %d, want its weight", name, p.Weights[i], p.Charged[i])
				}
			}
			if p.Local != tt.local {
				t.Errorf("Local = %v, want %v", p.Local, tt.local)
			}
		})
	}
}
