// Command liveserver is a small HTTP server for kprof's live-profile
// test: each request runs in its own goroutine (net/http's) and computes
// a sum in handleWork; it serves until it is killed.
//
//	liveserver [ADDR [mount]]
//
// With "mount" it also serves kprof's live profiles itself, on its own
// mux at /debug/kprof/ (package kprofhttp), as a program that already
// serves HTTP would.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/kprof/kprof/agent/kprofhttp"
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
	mux := http.NewServeMux()
	mux.HandleFunc("/work", handleWork)
	if len(os.Args) > 2 && os.Args[2] == "mount" {
		mux.Handle("/debug/kprof/", kprofhttp.Handler())
	}
	addr := "127.0.0.1:0"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	if err := http.ListenAndServe(addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
