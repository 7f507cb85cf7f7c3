// A program that does not compile: the error must point here, line 9.
package main

import "fmt"

func main() {
	n := 3
	fmt.Println(n)
	var s string = n
	fmt.Println(s)
}
