// Package pkgagent is a small custom kprof agent: it counts instructions
// per package of the running function and prints the table to standard
// error when the program exits. Link it with
//
//	kprof build -agent example.com/customagent/pkgagent .
package pkgagent

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/kprof/kprof/agent"
)

type perPackage struct {
	mu    sync.Mutex
	count map[string]int64
}

const granularity = 1000

// Register is called at a goroutine's first check: the instructions until
// its first sample.
func (p *perPackage) Register() int64 { return granularity }

// Sample gets the goroutine's stack (innermost last), the length of the
// prefix unchanged since its previous sample, and the instructions run
// since then; it returns the instructions until the next sample.
func (p *perPackage) Sample(stack []*agent.Func, from int, n int64) int64 {
	pkg := "(no stack)"
	if len(stack) > 0 {
		pkg = packageOf(stack[len(stack)-1].Name)
	}
	p.mu.Lock()
	p.count[pkg] += n
	p.mu.Unlock()
	return granularity
}

// Exit gets what an ending goroutine ran after its last sample.
func (p *perPackage) Exit(n int64) {
	p.mu.Lock()
	p.count["(goroutine ends)"] += n
	p.mu.Unlock()
}

// packageOf returns the import path of "path/pkg.(*T).M.func1".
func packageOf(name string) string {
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

func init() {
	p := &perPackage{count: map[string]int64{}}
	agent.Install(p)
	agent.AtExit(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		pkgs := make([]string, 0, len(p.count))
		for k := range p.count {
			pkgs = append(pkgs, k)
		}
		sort.Slice(pkgs, func(i, j int) bool { return p.count[pkgs[i]] > p.count[pkgs[j]] })
		for _, k := range pkgs {
			fmt.Fprintf(os.Stderr, "pkgagent: %-20s %d\n", k, p.count[k])
		}
	})
}
