// Command binarytrees is the kprof evaluation workload for allocation and
// garbage collection: the classic binary-trees benchmark (allocate complete
// binary trees of many depths, walk them, discard them; keep one long-lived
// tree). It runs on a single goroutine so the work is the same on every run.
//
// Usage: binarytrees [-n depth]. -n is the maximum tree depth (at least 6 is
// used, so -n 1 is the quick size). The program prints one deterministic
// checksum line.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"os"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const minDepth = 4

// Node is a tree node; leaves have both children nil.
type Node struct {
	left, right *Node
}

// build allocates a complete tree of the given depth.
func build(depth int) *Node {
	if depth == 0 {
		return &Node{}
	}
	return &Node{left: build(depth - 1), right: build(depth - 1)}
}

// count returns the number of nodes of t.
func (t *Node) count() int64 {
	if t.left == nil {
		return 1
	}
	return 1 + t.left.count() + t.right.count()
}

func main() {
	n := flag.Int("n", 18, "problem size: maximum tree depth")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "binarytrees: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	maxDepth := max(*n, minDepth+2)
	sum := fnv.New64a()
	var total int64

	report := func(depth int, iterations, check int64) {
		total += check
		fmt.Fprintf(sum, "%d %d %d\n", depth, iterations, check)
	}

	stretch := maxDepth + 1
	report(stretch, 1, build(stretch).count())

	longLived := build(maxDepth)
	for depth := minDepth; depth <= maxDepth; depth += 2 {
		iterations := int64(1) << (maxDepth - depth + minDepth)
		var check int64
		for i := int64(0); i < iterations; i++ {
			check += build(depth).count()
		}
		report(depth, iterations, check)
	}
	report(maxDepth, 1, longLived.count())

	fmt.Printf("binarytrees n=%d depth=%d nodes=%d checksum=%016x\n", *n, maxDepth, total, sum.Sum64())
}
