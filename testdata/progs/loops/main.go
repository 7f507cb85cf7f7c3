// Loops: conditions, post statements, continue and break, labels, every
// kind of range.
package main

func main() {
	a := []int{5, -1, 3, 9, 4, 0, 7}
	s := 0
	for i := 0; i < len(a) && s < 1000; i++ {
		if a[i] < 0 {
			continue
		}
		s += a[i]
	}
	for i, v := range a {
		if v > 8 || v < 0 {
			continue
		}
		if i > 5 {
			break
		}
		s += v * i
	}
	for range 3 {
		s++
	}
	for i := range 10 {
		if i%3 == 0 {
			continue
		}
		s += i
	}
	var arr [4]int
	for i := range arr {
		arr[i] = i * i
	}
	for _, v := range &arr {
		s += v
	}
	ch := make(chan int, 5)
	for i := 0; i < 5; i++ {
		ch <- i
	}
	close(ch)
	for v := range ch {
		s += v
	}
outer:
	for i := 0; i < 5; i++ {
		for j := 0; j < 5; j++ {
			if j == 3 {
				continue outer
			}
			if i == 4 {
				break outer
			}
			s += i * j
		}
	}
	n := 0
	for n < 10 {
		n += 3
	}
	for ok := true; ok; ok = n < 20 {
		n++
	}
	m := map[int]int{1: 2, 3: 4, 5: 6}
	for k, v := range m {
		s += k * v
	}
	for range m {
		s++
	}
	println(s, n)
}
