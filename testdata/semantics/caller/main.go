// runtime.Caller and stack traces report the original file and line.
package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

func where() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

func stackLines() []string {
	buf := make([]byte, 4096)
	n := runtime.Stack(buf, false)
	var out []string
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		if strings.Contains(l, "main.go:") {
			l = strings.TrimSpace(l)
			if i := strings.Index(l, " +0x"); i > 0 {
				l = l[:i]
			}
			out = append(out, filepath.Base(l))
		}
	}
	return out
}

func main() {
	fmt.Println(where())
	func() {
		fmt.Println(where())
	}()
	fmt.Println(stackLines())
}
