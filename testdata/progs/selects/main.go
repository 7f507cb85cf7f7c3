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
		s += pick(a, b, i) + nested(i)
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
