// lang: go1.16
//
// A file of a module that declares go 1.16: what kprof inserts must
// compile without generics (case value ticks in function literals, returns
// through named results or temporaries).
package main

type op uint8

const (
	opAdd op = iota + 1
	opSub
	opMul
)

func code(s string) op { return op(len(s)) }

func eval(o op, a, b int) int {
	for i := 0; i < b; i++ {
		a++
	}
	switch o {
	case code("+"), opAdd:
		return a + b
	case opSub:
		return a - b
	case opMul:
		return a * b
	}
	return 0
}

func pair(a int) (int, error) {
	return eval(opAdd, a, 1), nil
}

func twice(a int) (int, error) {
	return pair(a)
}

func shadow(a int) (r int) {
	{
		r := 2
		return eval(opMul, r, a)
	}
}

func main() {
	n, _ := twice(3)
	println(n, shadow(4))
}
