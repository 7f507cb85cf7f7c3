// Command gorandom uses what Go randomises on every run: map seeds and
// iteration order (encoding/json and fmt sort map keys after iterating),
// select among ready cases, sync.Pool (fmt takes its printers from one)
// from several goroutines, math/rand's top-level functions and
// hash/maphash. Its output never varies; in a kprof build its profile does
// not either (deterministic mode).
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math/rand"
	"os"
	"strings"
	"sync"
)

func worker(w int) string {
	m := make(map[string]int)
	for i := 0; i < 300; i++ {
		m[fmt.Sprintf("key-%d-%03d", w, (i*37)%300)] = i * w
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	small := map[int]string{3: "c", 1: "a", 2: "b", 5: "e", 4: "d"}
	s := fmt.Sprint(small)
	sum := 0
	for k, v := range m {
		sum += len(k) + v
	}
	return fmt.Sprintf("worker %d: json %x, %s, sum %d", w, sha256.Sum256(b), s, sum)
}

// choose runs select with several ready cases: which one runs is random
// in Go, so the counts of the clauses differ between runs unless the
// choice is deterministic.
func choose(n int) (a, b, c int) {
	ca, cb, cc := make(chan int, n), make(chan int, n), make(chan int, n)
	for i := 0; i < n; i++ {
		ca <- i
		cb <- i
		cc <- i
	}
	for i := 0; i < n; i++ {
		select {
		case <-ca:
			a++
		case <-cb:
			b += strings.Count(fmt.Sprint(i), "1") + 1
		case <-cc:
			c += len(fmt.Sprintf("%08d", i))
		}
	}
	return a, b, c
}

func main() {
	// Which goroutine first fills a cache the workers share (encoding/
	// json's encoder for a type) is a race no runtime change removes: the
	// program fills it before it starts them.
	worker(-1)
	out := make([]string, 4)
	var wg sync.WaitGroup
	for w := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[w] = worker(w)
		}()
	}
	wg.Wait()
	for _, s := range out {
		fmt.Println(s)
	}
	a, b, c := choose(300)
	// The split between the cases is random; their total is not.
	fmt.Println("select:", a+b+c > 300)
	// Top-level math/rand and maphash are seeded at random: only their
	// use, not their values, goes into the output.
	x := rand.Intn(1000)
	var h maphash.Hash
	h.WriteString("kprof")
	fmt.Println("rand in range:", x >= 0 && x < 1000, h.Sum64() != 0)
	if len(out) != 4 {
		os.Exit(1)
	}
}
