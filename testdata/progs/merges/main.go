// Program merges calls a small function that the compiler inlines and
// that checks and charges on entry (it calls through an interface, so it
// is no leaf): the caller's charge before the call and the callee's entry
// charge are two additions of constants to the count in a row, which
// kprof's compiler merges into one (TestMergedCharges), as in
// math/rand/v2's uint64n, which inlines Rand.Uint64.
package main

type source interface{ next() uint64 }

type pcg struct{ s uint64 }

func (p *pcg) next() uint64 {
	p.s = p.s*6364136223846793005 + 1442695040888963407
	return p.s >> 33
}

type rng struct{ src source }

func (r *rng) draw() uint64 { return r.src.next() }

func (r *rng) below(n uint64) uint64 {
	if n&(n-1) == 0 {
		return r.draw() & (n - 1)
	}
	x := r.draw()
	for x >= 1<<31-(1<<31)%n {
		x = r.draw()
	}
	return x % n
}

func main() {
	r := &rng{&pcg{1}}
	s := uint64(0)
	for i := 0; i < 1000; i++ {
		s += r.below(uint64(i%7 + 1))
	}
	println(s)
}
