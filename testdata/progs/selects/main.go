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
		s += pick(a, b, i)
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
