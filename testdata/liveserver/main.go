// Command liveserver is a small HTTP server for kprof's live-profile
// test: each request runs in its own goroutine (net/http's) and computes
// a sum in handleWork; it serves until it is killed.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
)

// handleWork sums the first n squares, n from ?n= (default 1000).
func handleWork(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.FormValue("n"))
	if err != nil || n <= 0 {
		n = 1000
	}
	fmt.Fprintln(w, squares(n))
}

func squares(n int) int {
	s := 0
	for i := 1; i <= n; i++ {
		s += i * i
	}
	return s
}

func main() {
	http.HandleFunc("/work", handleWork)
	addr := "127.0.0.1:0"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	if err := http.ListenAndServe(addr, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
