// Generic functions and types: each body is counted once.
package main

type number interface{ ~int | ~int64 | ~float64 }

func sum[T number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

type stack[T any] struct{ items []T }

func (s *stack[T]) push(x T) { s.items = append(s.items, x) }
func (s *stack[T]) pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	x := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return x, true
}

func main() {
	st := &stack[int]{}
	for i := 0; i < 30; i++ {
		st.push(i)
	}
	t := 0
	for {
		x, ok := st.pop()
		if !ok {
			break
		}
		t += x
	}
	println(sum([]int{1, 2, 3}), int(sum([]float64{1.5, 2.5})), t)
}
