// A deterministic multi-goroutine program: a pipeline of stages joined by
// unbuffered channels, no locks, no maps, no fmt (whose sync.Pool depends
// on GOMAXPROCS and GC timing). Each goroutine executes the same
// instructions on every run, whatever the scheduling, so its profile is
// byte-identical on every run. Every stage ends with a deferred close of its
// own channel, after all its counted code, and main waits for them all: no
// goroutine runs counted code while the program exits.
package main

func produce(n int, out chan<- uint64, fin chan struct{}) {
	defer close(fin)
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out <- x
	}
	close(out)
}

func square(in <-chan uint64, out chan<- uint64, fin chan struct{}) {
	defer close(fin)
	for v := range in {
		out <- (v % 1000003) * (v % 1000003)
	}
	close(out)
}

func collatzSteps(in <-chan uint64, out chan<- uint64, fin chan struct{}) {
	defer close(fin)
	for v := range in {
		steps := uint64(0)
		for v > 1 && steps < 500 {
			if v%2 == 0 {
				v /= 2
			} else {
				v = 3*v + 1
			}
			steps++
		}
		out <- steps
	}
	close(out)
}

func sum(in <-chan uint64, total *uint64, fin chan struct{}) {
	defer close(fin)
	var s uint64
	for v := range in {
		s += v
	}
	*total = s
}

func main() {
	a := make(chan uint64)
	b := make(chan uint64)
	c := make(chan uint64)
	fins := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})}
	var total uint64
	go produce(20000, a, fins[0])
	go square(a, b, fins[1])
	go collatzSteps(b, c, fins[2])
	go sum(c, &total, fins[3])
	for _, f := range fins {
		<-f
	}
	println(total)
}
