// A program that handles SIGINT and SIGTERM itself (a graceful shutdown):
// it must see every one and end as it chooses, with its profile written
// at exit. With the argument "stop" it stops listening as soon as the
// first one arrives (as signal.NotifyContext's stop does), then shuts
// down: kprof's agent, which got the signal too, must not end it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i % 7
	}
	return s
}

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	fmt.Println("ready")
	if len(os.Args) > 1 && os.Args[1] == "stop" {
		sig := <-c
		signal.Stop(c)
		fmt.Println("handled", sig)
		fmt.Println("clean exit", spin(20000000) > 0)
		return
	}
	for i := 0; i < 2; i++ {
		fmt.Println("handled", <-c)
	}
	fmt.Println("clean exit", spin(1000) > 0)
}
