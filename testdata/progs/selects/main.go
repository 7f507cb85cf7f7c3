// Select with ready channels and default, in one goroutine. At most one
// case is ready at a time, so that the choice is deterministic.
package main

func pick(a, b chan int, i int) int {
	select {
	case v := <-a:
		return v
	case b <- i:
		return -i
	default:
		return 1000
	}
}

func main() {
	a := make(chan int, 10)
	b := make(chan int) // nobody receives: sends never ready
	s := 0
	for i := 0; i < 20; i++ {
		if i%4 == 0 {
			a <- i
		}
		s += pick(a, b, i) + nested(i) + inSwitch(i)
		if i%5 == 0 {
			select {
			case <-b:
				s++
			default:
				s += 2
			}
		}
	}
	select {
	case a <- 1:
	}
	println(s, <-a)
}

// nested's default clause begins with a select, which go/ssa fuses into
// the outer select's test: that block tests the inner select's first
// index, and the inner's other tests follow it.
func nested(i int) int {
	x, y := i%5, i%3
	ready := make(chan int, 1)
	var none chan int
	if i%2 == 1 {
		ready <- i
	}
	sink := make(chan int, 1)
	if i%2 == 1 {
		sink = nil // (one case at most is ready: the choice is not random)
	}
	select {
	case v := <-none:
		x += v
	default:
		select {
		case sink <- x:
			y++
		case v := <-ready:
			x += v
		default:
		}
		y++
	}
	return x + y
}

// inSwitch: a switch's done block follows, among others, the dispatch on
// a select's case index, which has no position (the select's stands for
// it), in an if on a constant that is false: the block's other
// predecessors alone would name the inner switch.
func inSwitch(i int) int {
	x, y := i%5, i%3
	ready := make(chan int, 1)
	sink := make(chan int, 1)
	if i%2 == 1 {
		ready <- i
		sink = nil
	}
	switch y {
	case 0:
		x += y
		if 5%2 != 1 {
			select {
			case sink <- x:
				y++
			case v := <-ready:
				x += v
			default:
			}
		} else if ((y+x)%7%2 > 2 || x*3+x > 1) && 0%2 == 0 {
		}
	case 1, 2:
		switch i % 5 {
		case 1:
			x += 7
		case 2:
			y--
		}
	}
	for j := 0; j < 2; j++ {
		x += j
	}
	return x + y
}
