// Package hwm prints a program's peak resident set, for the tests that
// measure it: a parent's rusage of a child counts, on Linux, the memory of
// the process that started the child (maxrss survives exec), so a program
// the tests run reports its own.
package hwm

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Print prints the line "hwm N kB": Linux's VmHWM of this process.
func Print() {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fmt.Println("hwm", strings.TrimSpace(v))
		}
	}
}
