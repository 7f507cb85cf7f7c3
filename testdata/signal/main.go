// A program that runs until it is interrupted.
package main

import "os"

func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i % 7
	}
	return s
}

func main() {
	os.Stdout.WriteString("ready\n")
	for {
		spin(1000)
	}
}
