// defer, panic and recover, named results.
package main

func safeDiv(a, b int) (q int, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	if b == 0 {
		// An explicit panic: go/ssa/interp, the test oracle, does not
		// recover runtime errors the way Go does.
		panic("division by zero")
	}
	q = a / b
	ok = true
	return
}

func deep(n int) int {
	if n == 0 {
		panic("bottom")
	}
	return deep(n-1) + 1
}

func catch(n int) (r int) {
	defer func() {
		if recover() != nil {
			r = -n
		}
	}()
	return deep(n)
}

func counted() (n int) {
	for i := 0; i < 3; i++ {
		defer func() { n += i }()
	}
	return 10
}

func main() {
	s := 0
	for i := -3; i < 4; i++ {
		q, ok := safeDiv(12, i)
		if ok {
			s += q
		} else {
			s += 100
		}
	}
	s += catch(5) + counted()
	println(s)
}
