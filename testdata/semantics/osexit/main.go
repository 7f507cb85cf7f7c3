// os.Exit from a goroutine while main waits: exit status 3, and the
// profile is still written.
package main

import (
	"fmt"
	"os"
)

func main() {
	done := make(chan bool)
	go func() {
		s := 0
		for i := 0; i < 1000; i++ {
			s += i
		}
		fmt.Println("exiting with", s)
		os.Exit(3)
	}()
	<-done
}
