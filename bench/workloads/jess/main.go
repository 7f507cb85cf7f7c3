// Command jess is the kprof evaluation workload in the role of SPEC JVM98
// _202_jess (an expert-system shell): search-heavy symbolic reasoning. It
// solves generated random 3-SAT formulas near the satisfiability threshold
// with a DPLL solver (two-watched-literal unit propagation, chronological
// backtracking, static occurrence-count branching) and checks every model.
//
// Usage: jess [-n formulas]. Each unit of -n is one formula over 140
// variables and 598 clauses (ratio ~4.27). The program prints one
// deterministic checksum line.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	numVars    = 140
	numClauses = 598
)

// A literal is 2*v for variable v true and 2*v+1 for v false.
type lit int32

func (l lit) neg() lit { return l ^ 1 }
func (l lit) v() int32 { return int32(l >> 1) }

type solver struct {
	clauses   [][]lit
	watches   [][]int32 // literal -> clauses watching it
	value     []int8    // per variable: 0 unassigned, 1 true, -1 false
	trail     []lit
	qhead     int
	levels    []level
	order     []int32 // branching order of variables
	decisions uint64
	conflicts uint64
	props     uint64
}

type level struct {
	start   int // trail length when the level began
	dec     lit
	flipped bool
}

func (s *solver) litValue(l lit) int8 {
	v := s.value[l.v()]
	if l&1 != 0 {
		return -v
	}
	return v
}

func (s *solver) assign(l lit) {
	if l&1 == 0 {
		s.value[l.v()] = 1
	} else {
		s.value[l.v()] = -1
	}
	s.trail = append(s.trail, l)
}

func newSolver(clauses [][]lit) *solver {
	s := &solver{
		clauses: clauses,
		watches: make([][]int32, 2*numVars),
		value:   make([]int8, numVars),
	}
	occ := make([]int, 2*numVars)
	for ci, c := range clauses {
		s.watches[c[0]] = append(s.watches[c[0]], int32(ci))
		s.watches[c[1]] = append(s.watches[c[1]], int32(ci))
		for _, l := range c {
			occ[l]++
		}
	}
	for v := int32(0); v < numVars; v++ {
		s.order = append(s.order, v)
	}
	slices.SortStableFunc(s.order, func(a, b int32) int {
		return (occ[2*b] + occ[2*b+1]) - (occ[2*a] + occ[2*a+1])
	})
	return s
}

// propagate performs unit propagation; it reports false on a conflict.
func (s *solver) propagate() bool {
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		s.props++
		falseLit := p.neg()
		ws := s.watches[falseLit]
		keep := ws[:0]
		for i := 0; i < len(ws); i++ {
			ci := ws[i]
			c := s.clauses[ci]
			if c[0] == falseLit {
				c[0], c[1] = c[1], c[0]
			}
			if s.litValue(c[0]) == 1 {
				keep = append(keep, ci)
				continue
			}
			moved := false
			for k := 2; k < len(c); k++ {
				if s.litValue(c[k]) != -1 {
					c[1], c[k] = c[k], c[1]
					s.watches[c[1]] = append(s.watches[c[1]], ci)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			keep = append(keep, ci)
			switch s.litValue(c[0]) {
			case -1: // conflict: keep the remaining watches and stop
				keep = append(keep, ws[i+1:]...)
				s.watches[falseLit] = keep
				return false
			case 0:
				s.assign(c[0])
			}
		}
		s.watches[falseLit] = keep
	}
	return true
}

func (s *solver) undoTo(n int) {
	for len(s.trail) > n {
		l := s.trail[len(s.trail)-1]
		s.value[l.v()] = 0
		s.trail = s.trail[:len(s.trail)-1]
	}
	s.qhead = n
}

// solve runs DPLL and reports satisfiability.
func (s *solver) solve() bool {
	for {
		if !s.propagate() {
			s.conflicts++
			// Backtrack to the newest decision whose other branch is untried.
			for len(s.levels) > 0 && s.levels[len(s.levels)-1].flipped {
				s.levels = s.levels[:len(s.levels)-1]
			}
			if len(s.levels) == 0 {
				return false
			}
			top := &s.levels[len(s.levels)-1]
			s.undoTo(top.start)
			top.flipped = true
			s.assign(top.dec.neg())
			continue
		}
		next := lit(-1)
		for _, v := range s.order {
			if s.value[v] == 0 {
				next = lit(2*v + 1) // try false first
				break
			}
		}
		if next < 0 {
			return true
		}
		s.decisions++
		s.levels = append(s.levels, level{start: len(s.trail), dec: next})
		s.assign(next)
	}
}

func genFormula(r *rand.Rand) [][]lit {
	cls := make([][]lit, 0, numClauses)
	for len(cls) < numClauses {
		a, b, c := int32(r.IntN(numVars)), int32(r.IntN(numVars)), int32(r.IntN(numVars))
		if a == b || b == c || a == c {
			continue
		}
		cls = append(cls, []lit{
			lit(2*a + int32(r.IntN(2))),
			lit(2*b + int32(r.IntN(2))),
			lit(2*c + int32(r.IntN(2))),
		})
	}
	return cls
}

func main() {
	n := flag.Int("n", 90, "problem size: number of random 3-SAT formulas")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "jess: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	r := rand.New(rand.NewPCG(1, 2))
	sum := fnv.New64a()
	var sat, unsat, decisions, conflicts, props uint64
	var buf []byte
	for f := 0; f < *n; f++ {
		formula := genFormula(r)
		orig := make([][]lit, len(formula))
		for i, c := range formula {
			orig[i] = slices.Clone(c)
		}
		s := newSolver(formula)
		ok := s.solve()
		buf = buf[:0]
		if ok {
			sat++
			for _, c := range orig {
				if s.litValue(c[0]) != 1 && s.litValue(c[1]) != 1 && s.litValue(c[2]) != 1 {
					fmt.Fprintf(os.Stderr, "jess: formula %d: model violates a clause\n", f)
					os.Exit(1)
				}
			}
			for _, v := range s.value {
				buf = append(buf, byte(v+1))
			}
		} else {
			unsat++
			buf = append(buf, 'U')
		}
		decisions += s.decisions
		conflicts += s.conflicts
		props += s.props
		buf = fmt.Appendf(buf, "%d/%d/%d", s.decisions, s.conflicts, s.props)
		sum.Write(buf)
	}
	fmt.Printf("jess n=%d sat=%d unsat=%d decisions=%d conflicts=%d props=%d checksum=%016x\n",
		*n, sat, unsat, decisions, conflicts, props, sum.Sum64())
}
