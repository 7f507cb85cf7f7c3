// Goroutines, channels, select, mutexes and WaitGroups: the output is
// deterministic although the interleaving is not.
package main

import (
	"fmt"
	"sort"
	"sync"
)

func worker(id int, jobs <-chan int, results chan<- [2]int, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		results <- [2]int{j, j * j * id / id}
	}
}

func main() {
	jobs := make(chan int)
	results := make(chan [2]int, 100)
	var wg sync.WaitGroup
	for i := 1; i <= 4; i++ {
		wg.Add(1)
		go worker(i, jobs, results, &wg)
	}
	for j := 0; j < 100; j++ {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	close(results)
	var all [][2]int
	for r := range results {
		all = append(all, r)
	}
	sort.Slice(all, func(i, j int) bool { return all[i][0] < all[j][0] })
	var mu sync.Mutex
	total := 0
	var wg2 sync.WaitGroup
	for _, r := range all {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			mu.Lock()
			total += r[1]
			mu.Unlock()
		}()
	}
	wg2.Wait()
	done := make(chan struct{})
	ticks := 0
	go func() {
		for i := 0; i < 3; i++ {
			ticks++
		}
		close(done)
	}()
	select {
	case <-done:
	}
	fmt.Println(len(all), total, ticks)
}
