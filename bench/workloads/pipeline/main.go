// Command pipeline is the kprof evaluation workload for goroutines and
// channels: a six-stage pipeline.
//
//	generate -> parse -> 3 x digest workers -> merge -> window -> sink (main)
//
// The generator emits text records, the parser turns them into numbers, the
// workers sort each record and hash it with SHA-256, the merger restores the
// record order, the window stage keeps running statistics, and main folds the
// summaries into a checksum. Records are dealt to the workers round-robin and
// collected round-robin, so every goroutine performs the same sequence of
// operations on every run: the result and the per-goroutine work do not
// depend on scheduling.
//
// Usage: pipeline [-n units]. Each unit of -n is 5000 records. The program
// prints one deterministic checksum line.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	recordsPerUnit = 5000
	valuesPerRec   = 48
	workers        = 3
	window         = 64
	summaryEvery   = 250
	chanBuf        = 8
)

type record struct {
	seq    uint64
	key    string
	values []uint32
}

type digest struct {
	seq    uint64
	key    string
	sum    [sha256.Size]byte
	median uint32
	total  uint64
}

type summary struct {
	upto   uint64
	mean   uint64
	maxMed uint32
	hash   uint64
}

// generate emits count text records "seq|key|v1,v2,...".
func generate(count uint64, out chan<- string) {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for seq := uint64(0); seq < count; seq++ {
		b.Reset()
		b.WriteString(strconv.FormatUint(seq, 10))
		b.WriteByte('|')
		for k := 3 + r.IntN(6); k > 0; k-- {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte('|')
		for i := 0; i < valuesPerRec; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(uint64(r.Uint32N(1_000_000)), 10))
		}
		out <- b.String()
	}
	close(out)
}

// parse converts text records and deals them round-robin to the workers.
func parse(in <-chan string, outs []chan record) {
	i := 0
	for line := range in {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			fail("malformed record %q", line)
		}
		seq, err := strconv.ParseUint(parts[0], 10, 64)
		if err != nil {
			fail("%v", err)
		}
		rec := record{seq: seq, key: parts[1], values: make([]uint32, 0, valuesPerRec)}
		for f := range strings.SplitSeq(parts[2], ",") {
			v, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				fail("%v", err)
			}
			rec.values = append(rec.values, uint32(v))
		}
		outs[i] <- rec
		i = (i + 1) % len(outs)
	}
	for _, c := range outs {
		close(c)
	}
}

// work sorts and hashes records.
func work(in <-chan record, out chan<- digest) {
	buf := make([]byte, 4*valuesPerRec)
	for rec := range in {
		slices.Sort(rec.values)
		var total uint64
		for i, v := range rec.values {
			binary.LittleEndian.PutUint32(buf[4*i:], v)
			total += uint64(v)
		}
		out <- digest{
			seq:    rec.seq,
			key:    rec.key,
			sum:    sha256.Sum256(buf[:4*len(rec.values)]),
			median: rec.values[len(rec.values)/2],
			total:  total,
		}
	}
	close(out)
}

// merge collects the workers' results in record order.
func merge(ins []chan digest, out chan<- digest) {
	var next uint64
	for i := 0; ; i = (i + 1) % len(ins) {
		d, ok := <-ins[i]
		if !ok {
			break
		}
		if d.seq != next {
			fail("merge: got record %d, want %d", d.seq, next)
		}
		next++
		out <- d
	}
	close(out)
}

// windowStats keeps a sliding window of totals and emits periodic summaries.
func windowStats(in <-chan digest, out chan<- summary) {
	var ring [window]uint64
	var ringSum uint64
	var maxMed uint32
	h := fnv.New64a()
	var count uint64
	for d := range in {
		slot := count % window
		ringSum += d.total - ring[slot]
		ring[slot] = d.total
		maxMed = max(maxMed, d.median)
		h.Write(d.sum[:])
		h.Write([]byte(d.key))
		count++
		if count%summaryEvery == 0 {
			out <- summary{upto: count, mean: ringSum / window, maxMed: maxMed, hash: h.Sum64()}
			maxMed = 0
		}
	}
	if count%summaryEvery != 0 {
		out <- summary{upto: count, mean: ringSum / window, maxMed: maxMed, hash: h.Sum64()}
	}
	close(out)
}

func main() {
	n := flag.Int("n", 80, "problem size: number of 5000-record units")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "pipeline: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	count := uint64(*n) * recordsPerUnit

	lines := make(chan string, chanBuf)
	toWorkers := make([]chan record, workers)
	fromWorkers := make([]chan digest, workers)
	for i := range toWorkers {
		toWorkers[i] = make(chan record, chanBuf)
		fromWorkers[i] = make(chan digest, chanBuf)
	}
	merged := make(chan digest, chanBuf)
	summaries := make(chan summary, chanBuf)

	go generate(count, lines)
	go parse(lines, toWorkers)
	for i := range toWorkers {
		go work(toWorkers[i], fromWorkers[i])
	}
	go merge(fromWorkers, merged)
	go windowStats(merged, summaries)

	sum := fnv.New64a()
	var nsum uint64
	var word [8]byte
	for s := range summaries {
		nsum++
		for _, v := range []uint64{s.upto, s.mean, uint64(s.maxMed), s.hash} {
			binary.LittleEndian.PutUint64(word[:], v)
			sum.Write(word[:])
		}
	}
	fmt.Printf("pipeline n=%d records=%d summaries=%d checksum=%016x\n", *n, count, nsum, sum.Sum64())
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pipeline: "+format+"\n", args...)
	os.Exit(1)
}
