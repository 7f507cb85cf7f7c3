package rewrite

import (
	"fmt"
	"os"
	"testing"
)

func TestDbg(t *testing.T) {
	f := os.Getenv("DBG")
	if f == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(f)
	_, out := instrument(t, f, src)
	fmt.Println(describe(out))
	fmt.Println(string(out.Files[0]))
}
