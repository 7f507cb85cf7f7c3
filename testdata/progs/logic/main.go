// && and || in conditions and values, else-if chains.
package main

type flag bool

func check(a, b, c int) bool {
	return a < b && (b < c || c == 0) || a == 42
}

func sign(x int) int {
	if x > 0 {
		return 1
	} else if x < 0 {
		return -1
	} else if x == 0 && true {
		return 0
	}
	return 99
}

func main() {
	s := 0
	var f flag = true
	for i := -5; i < 15; i++ {
		ok := check(i, 3, i%4)
		if flag(ok) && f {
			s++
		}
		x := i > 2 || i < -3
		if x {
			s += 2
		}
		s += sign(i - 5)
		if g := flag(i > 0); g && f || !g {
			s += 3
		}
	}
	println(s)
}
