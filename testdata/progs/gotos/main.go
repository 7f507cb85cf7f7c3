// goto and labels.
package main

func collatz(n int) int {
	steps := 0
loop:
	if n == 1 {
		goto done
	}
	if n%2 == 0 {
		n /= 2
	} else {
		n = 3*n + 1
	}
	steps++
	goto loop
done:
	return steps
}

func main() {
	s := 0
	for i := 1; i < 60; i++ {
		s += collatz(i)
	}
	println(s)
}
