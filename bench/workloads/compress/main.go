// Command compress is the kprof evaluation workload in the role of SPEC JVM98
// _201_compress: LZW (compress/lzw) and DEFLATE (compress/flate) round trips
// over generated, compressible text.
//
// Usage: compress [-n blocks]. Each unit of -n is one 256 KiB block that is
// generated, compressed and decompressed with both codecs. The program prints
// one deterministic checksum line.
package main

import (
	"bytes"
	"compress/flate"
	"compress/lzw"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const blockSize = 256 << 10

var levels = []string{"DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"}

func main() {
	n := flag.Int("n", 110, "problem size: number of 256 KiB blocks")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "compress: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()

	r := rand.New(rand.NewPCG(1, 2))
	vocab := makeVocab(r, 300)
	sum := fnv.New64a()
	var raw, lzwBytes, flateBytes uint64
	var comp bytes.Buffer
	block := make([]byte, 0, blockSize+256)
	var word [8]byte

	for i := 0; i < *n; i++ {
		block = fillBlock(r, vocab, block[:0])
		raw += uint64(len(block))

		// LZW round trip.
		comp.Reset()
		w := lzw.NewWriter(&comp, lzw.LSB, 8)
		mustWrite(w, block)
		must(w.Close())
		lzwBytes += uint64(comp.Len())
		lr := lzw.NewReader(bytes.NewReader(comp.Bytes()), lzw.LSB, 8)
		out, err := io.ReadAll(lr)
		must(err)
		must(lr.Close())
		if !bytes.Equal(out, block) {
			fail("LZW round trip mismatch in block %d", i)
		}
		binary.LittleEndian.PutUint64(word[:], uint64(comp.Len()))
		sum.Write(word[:])

		// DEFLATE round trip at a level that cycles through 1..9.
		comp.Reset()
		fw, err := flate.NewWriter(&comp, 1+i%9)
		must(err)
		mustWrite(fw, block)
		must(fw.Close())
		flateBytes += uint64(comp.Len())
		fr := flate.NewReader(bytes.NewReader(comp.Bytes()))
		out, err = io.ReadAll(fr)
		must(err)
		must(fr.Close())
		if !bytes.Equal(out, block) {
			fail("flate round trip mismatch in block %d", i)
		}
		binary.LittleEndian.PutUint64(word[:], uint64(comp.Len()))
		sum.Write(word[:])
		sum.Write(out)
	}
	fmt.Printf("compress n=%d raw=%d lzw=%d flate=%d checksum=%016x\n",
		*n, raw, lzwBytes, flateBytes, sum.Sum64())
}

// makeVocab returns count pseudo-words of 2 to 10 lower-case letters.
func makeVocab(r *rand.Rand, count int) [][]byte {
	const letters = "etaoinshrdlucmfwypvbgkjqxz"
	vocab := make([][]byte, count)
	for i := range vocab {
		w := make([]byte, 2+r.IntN(9))
		for j := range w {
			// Skewed letter choice: frequent letters come first.
			w[j] = letters[min(r.IntN(len(letters)), r.IntN(len(letters)))]
		}
		vocab[i] = w
	}
	return vocab
}

// pick returns a vocabulary word with a skewed (roughly Zipf-like) distribution.
func pick(r *rand.Rand, vocab [][]byte) []byte {
	k := len(vocab)
	return vocab[min(r.IntN(k), r.IntN(k), r.IntN(k))]
}

// fillBlock appends generated text to b until it holds blockSize bytes:
// a mix of log lines and prose paragraphs.
func fillBlock(r *rand.Rand, vocab [][]byte, b []byte) []byte {
	var clock uint64 = 1_000_000
	for len(b) < blockSize {
		if r.IntN(3) > 0 {
			clock += uint64(r.IntN(5000))
			b = append(b, "2006-01-02 "...)
			b = appendClock(b, clock)
			b = append(b, ' ')
			b = append(b, levels[r.IntN(len(levels))]...)
			b = append(b, " user="...)
			b = append(b, pick(r, vocab)...)
			b = append(b, " action="...)
			b = append(b, pick(r, vocab)...)
			b = append(b, " latency="...)
			b = strconv.AppendUint(b, uint64(r.IntN(2000)), 10)
			b = append(b, "ms\n"...)
			continue
		}
		words := 8 + r.IntN(40)
		for j := 0; j < words; j++ {
			w := pick(r, vocab)
			if j == 0 {
				b = append(b, w[0]-'a'+'A')
				b = append(b, w[1:]...)
			} else {
				b = append(b, w...)
			}
			switch {
			case j == words-1:
				b = append(b, ".\n"...)
			case r.IntN(10) == 0:
				b = append(b, ", "...)
			default:
				b = append(b, ' ')
			}
		}
	}
	return b[:blockSize]
}

func appendClock(b []byte, t uint64) []byte {
	s := t / 1000 % 86400
	two := func(b []byte, v uint64) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = two(b, s/3600)
	b = append(b, ':')
	b = two(b, s/60%60)
	b = append(b, ':')
	b = two(b, s%60)
	b = append(b, '.')
	ms := t % 1000
	return append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
}

func mustWrite(w io.Writer, p []byte) {
	_, err := w.Write(p)
	must(err)
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compress: "+format+"\n", args...)
	os.Exit(1)
}
