// Recursion and a binary tree.
package main

type node struct{ l, r *node }

func build(d int) *node {
	if d == 0 {
		return &node{}
	}
	return &node{build(d - 1), build(d - 1)}
}

func (n *node) size() int {
	if n.l == nil {
		return 1
	}
	return 1 + n.l.size() + n.r.size()
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	println(fib(18), build(8).size())
}
