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

// constGoto's inner if has a constant condition and a body that only
// jumps: go/ssa gives its test no position and threads the jump, so its
// done block is found from what follows it (the loop), not from the
// outer if's condition before it.
func constGoto(a int) int {
	x, y := a%5, a%3
	if y*3%3 != 0 {
	} else if x%3 < 0 || a%7 > 3 {
		x += 2
	} else {
		if 2*4 < 1 {
			goto skip
		}
		for i := 0; i < 4; i++ {
			x += i
		}
	skip:
		x++
	}
	return x + y
}

// orConstGoto: the if's || ends in a constant, tested without a
// position, and nothing around the if is an if: its done block is found
// between the code before it and the loop it leads to.
func orConstGoto(a int) int {
	x, y := a%5, a%3
	for i := 0; i < 3; i++ {
		x += i
		if a%3 != 2 && (y%3 != 1 || 2 > 0) {
			goto next
		}
		for j := 0; j < y; j++ {
			x += j
		}
		x += 10
	next:
		x++
	}
	return x + y
}

// goneAfterLoop: the test of the constant condition that always jumps
// ends the range loop's done block, and the if's own done block, which
// never runs, has no position: it follows the if (before the loop it
// skips), not an if inside the range loop, which found it from the
// positions before. (The deferred closure keeps x and y on the heap.)
func goneAfterLoop(a int) (r int) {
	x, y := a%5, a%3
	defer func() { r += x - y }()
	for _, v := range []int{3, x, 4} {
		y += v
		if (0%3 < 0 || a > 3) && 6%2 < 0 {
			return x + a
		}
	}
	if 7%3 < 2 {
		goto end
	}
	for i := 0; i < 4; i++ {
		x += i
	}
end:
	x++
	return x + y
}

func main() {
	s := 0
	for i := 1; i < 60; i++ {
		s += collatz(i) + constGoto(i) + orConstGoto(i) + goneAfterLoop(i)
	}
	println(s)
}
