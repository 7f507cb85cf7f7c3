// A cgo call into C that calls back into Go.
package main

/*
#include <stdint.h>
extern int64_t goSquare(int64_t);
static int64_t sumSquares(int n) {
	int64_t s = 0;
	for (int i = 1; i <= n; i++) s += goSquare(i);
	return s;
}
*/
import "C"

import "fmt"

//export goSquare
func goSquare(x C.int64_t) C.int64_t {
	return x * x
}

func main() {
	fmt.Println(int64(C.sumSquares(10)))
}
