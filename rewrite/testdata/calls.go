// Checks around calls. A call needs no check before it: a callee that
// pushes itself checks on entry, in the caller's context, and one that
// does not push leaves what is pending to the caller's next check. Only
// MaxPath remains: a call of a function of this package that checks on
// entry (work) bounds the path, so sameCalls needs no check but its entry
// and return; a call of another package's function (strings.Repeat) or
// through an interface is not known to check, so the longer paths of
// otherCalls and dynamicCalls get MaxPath checks (loose ones).
package calls

import "strings"

type worker interface{ work(int) int }

func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func sameCalls(a, b, c int) int {
	x := a*b + c*a - b*c + a/3 + b/5 + c/7 + a%11 + b%13
	if x > 0 {
		x = work(x) + a*c - b*a + c/9 + a/17 + b%19 + c%23 + x*x
	}
	if x > 1 {
		x = work(x) + b*c - a*b + x/29 + b/31 + a%37 + b%41 + x*x
	}
	if x > 2 {
		x = work(x) + a*c - b*a + c/9 + a/17 + b%19 + c%23 + x*x
	}
	return x
}

func otherCalls(a, b, c int) int {
	x := a*b + c*a - b*c + a/3 + b/5 + c/7 + a%11 + b%13
	if x > 0 {
		x = len(strings.Repeat("x", x%3)) + a*c - b*a + c/9 + a/17 + b%19 + c%23 + x*x
	}
	if x > 1 {
		x = len(strings.Repeat("y", x%3)) + b*c - a*b + x/29 + b/31 + a%37 + b%41 + x*x
	}
	if x > 2 {
		x = len(strings.Repeat("z", x%3)) + a*c - b*a + c/9 + a/17 + b%19 + c%23 + x*x
	}
	return x
}

func dynamicCalls(w worker, a, b, c int) int {
	x := a*b + c*a - b*c + a/3 + b/5 + c/7 + a%11 + b%13
	if x > 0 {
		x = w.work(x) + a*c - b*a + c/9 + a/17 + b%19 + c%23 + x*x
	}
	if x > 1 {
		x = w.work(x) + b*c - a*b + x/29 + b/31 + a%37 + b%41 + x*x
	}
	if x > 2 {
		x = w.work(x) + a*c - b*a + c/9 + a/17 + b%19 + c%23 + x*x
	}
	return x
}
