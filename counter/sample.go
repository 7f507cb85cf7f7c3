package counter

import "unsafe"

// unknown stands for stack entries lost when a goroutine's stack buffer
// was too small for its depth (they are pushed again on the next call).
var unknown = Func{Name: "(unknown)"}

// S is the sampling slow path, called by a check whose counter reached
// zero. self is the running function if it has not pushed itself (a leaf,
// or a function's entry check), nil otherwise.
//
//go:noinline
func S(self *Func) {
	s := st()
	if s.InAgent || agent == nil || !onUserStack() {
		// Inside the agent, without an agent ("off"), or on a system
		// stack (g0 runs timer and GC code): no sample; keep counting
		// only what the goroutine itself runs.
		s.Count = never
		return
	}
	s.InAgent = true
	n := s.Gran - s.Count
	if s.Gran == 0 {
		// First check of this goroutine: register; the instructions it ran
		// so far count towards its first sample.
		g := agent.Register()
		s.Gran, s.Count = g, g-n
		if s.Count > 0 {
			s.InAgent = false
			return
		}
		n = g - s.Count
	}
	d := s.Depth
	if self != nil {
		d++
	}
	if d > len(s.Stack) {
		grow(s, d)
	}
	if self != nil {
		s.Stack[d-1] = uintptr(unsafe.Pointer(self))
	}
	stack := unsafe.Slice((**Func)(unsafe.Pointer(&s.Stack[0])), d)
	g := agent.Sample(stack, n)
	if g <= 0 {
		g = never
	}
	s.Gran, s.Count = g, g
	s.InAgent = false
}

// grow enlarges the stack buffer to hold at least d entries; entries the
// buffer could not hold are unknown until pushed again.
func grow(s *state, d int) {
	n := 2 * len(s.Stack)
	if n < 64 {
		n = 64
	}
	for n < d {
		n *= 2
	}
	ns := make([]uintptr, n)
	copy(ns, s.Stack)
	for i := len(s.Stack); i < d; i++ {
		ns[i] = uintptr(unsafe.Pointer(&unknown))
	}
	s.Stack = ns
}

// goexit runs as each goroutine exits: the instructions it ran since its
// last sample go to the agent.
func goexit() {
	s := st()
	if agent == nil || s.InAgent {
		return
	}
	n := s.Gran - s.Count
	s.InAgent = true
	agent.Exit(n)
	s.InAgent = false
}

// Flush returns the instructions the calling goroutine ran since its last
// sample and starts a new period, so that they are reported once (the
// agent calls it for the goroutine that ends the program).
func Flush() int64 {
	s := st()
	n := s.Gran - s.Count
	s.Count = s.Gran
	return n
}

// Local returns the agent's per-goroutine slot of the calling goroutine.
func Local() *unsafe.Pointer { return &st().Local }

// Enter marks the calling goroutine as running agent code: its checks do
// not fire and what it runs is not counted until the returned function is
// called. The agent uses it for work outside Sample (writing the profile).
func Enter() (leave func()) {
	s := st()
	was, count := s.InAgent, s.Count
	s.InAgent = true
	s.Count = never
	return func() {
		s := st()
		s.InAgent, s.Count = was, count
	}
}

// AtExit runs f when the program exits: main returns or os.Exit.
func AtExit(f func()) { addExitHook(f) }
