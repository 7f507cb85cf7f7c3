// Command churn is the kprof evaluation workload for goroutine churn: many
// short goroutines, at most 100 alive at once, each handling one small
// job — a server with a goroutine per request, in miniature, without the
// network. A profiler's per-goroutine state must cost what is alive, not
// what has lived.
//
// Each goroutine parses a generated record, sorts its fields and hashes
// them; it reports its hash on a channel as its last step, and main folds
// the hashes in with an addition, so the result and every goroutine's
// work are the same whatever the order in which goroutines finish. No
// locks, no sync.WaitGroup (whose retries under contention would vary the
// work), no fmt in the goroutines.
//
// Usage: churn [-n units]. Each unit of -n is 50,000 goroutines. The
// program prints one deterministic checksum line.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strconv"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	perUnit = 50_000
	alive   = 100 // goroutines alive at most
	fields  = 6
)

// record returns job i's input: fields numbers, comma separated.
func record(i uint64, buf []byte) []byte {
	x := i*0x9e3779b97f4a7c15 + 1
	for f := 0; f < fields; f++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if f > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendUint(buf, x%100_000, 10)
	}
	return buf
}

// job parses job i's record, sorts its numbers and hashes them.
func job(i uint64) uint64 {
	var buf [fields * 8]byte
	rec := record(i, buf[:0])
	var nums [fields]uint64
	n, start := 0, 0
	for j := 0; j <= len(rec); j++ {
		if j == len(rec) || rec[j] == ',' {
			v, err := strconv.ParseUint(string(rec[start:j]), 10, 64)
			if err != nil {
				return 0
			}
			nums[n] = v
			n++
			start = j + 1
		}
	}
	slices.Sort(nums[:n])
	h := fnv.New64a()
	var b [8]byte
	for _, v := range nums[:n] {
		for k := range b {
			b[k] = byte(v >> (8 * k))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// worker runs job i and reports its hash: its last step.
func worker(i uint64, done chan<- uint64) {
	done <- job(i)
}

func main() {
	n := flag.Int("n", 20, "problem size: units of 50,000 goroutines")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "churn: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	total := uint64(*n) * perUnit
	done := make(chan uint64, alive)
	var sum uint64
	running := 0
	for i := uint64(0); i < total; i++ {
		if running == alive {
			sum += <-done
			running--
		}
		go worker(i, done)
		running++
	}
	for ; running > 0; running-- {
		sum += <-done
	}
	if sum == 0 {
		fmt.Fprintln(os.Stderr, "churn: a record did not parse")
		os.Exit(1)
	}
	fmt.Printf("churn n=%d goroutines=%d checksum=%016x\n", *n, total, sum)
}
