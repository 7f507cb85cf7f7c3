// Command bigmath is the kprof evaluation workload for math/big: arbitrary
// precision arithmetic. Each round computes pi by Machin's formula and e by
// its factorial series in fixed-point big.Int arithmetic, sqrt(2) with
// big.Int.Sqrt, a factorial, and a harmonic number as an exact big.Rat, and
// converts every result to decimal.
//
// Usage: bigmath [-n rounds]. Each unit of -n is one round at about 5000
// decimal digits (the precision grows slightly with the round number). The
// program prints one deterministic checksum line.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math/big"
	"os"
	"strings"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const guard = 10 // extra decimal digits of working precision

// arctanInv returns arctan(1/x) * unity, by the alternating Taylor series.
func arctanInv(x int64, unity *big.Int) *big.Int {
	sum := new(big.Int)
	bx := big.NewInt(x)
	x2 := big.NewInt(x * x)
	power := new(big.Int).Quo(unity, bx) // unity / x^(2k+1)
	term := new(big.Int)
	for k := int64(0); power.Sign() != 0; k++ {
		term.Quo(power, big.NewInt(2*k+1))
		if k%2 == 0 {
			sum.Add(sum, term)
		} else {
			sum.Sub(sum, term)
		}
		power.Quo(power, x2)
	}
	return sum
}

// pi returns the first digits decimal digits of pi ("31415...").
func pi(digits int) string {
	unity := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits+guard)), nil)
	a := arctanInv(5, unity)
	b := arctanInv(239, unity)
	p := new(big.Int).Sub(a.Lsh(a, 4), b.Lsh(b, 2)) // 16 atan(1/5) - 4 atan(1/239)
	return p.String()[:digits]
}

// e returns the first digits decimal digits of e.
func e(digits int) string {
	unity := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits+guard)), nil)
	sum := new(big.Int).Set(unity)
	term := new(big.Int).Set(unity)
	for k := int64(1); term.Sign() != 0; k++ {
		term.Quo(term, big.NewInt(k))
		sum.Add(sum, term)
	}
	return sum.String()[:digits]
}

// sqrt2 returns the first digits decimal digits of sqrt(2).
func sqrt2(digits int) string {
	x := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(2*digits)), nil)
	x.Lsh(x, 1)
	return x.Sqrt(x).String()[:digits]
}

func factorial(k int64) *big.Int {
	return new(big.Int).MulRange(1, k)
}

func harmonic(k int64) *big.Rat {
	h := new(big.Rat)
	for i := int64(1); i <= k; i++ {
		h.Add(h, big.NewRat(1, i))
	}
	return h
}

func main() {
	n := flag.Int("n", 100, "problem size: number of rounds (about 5000 digits each)")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "bigmath: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	sum := fnv.New64a()
	var digitsOut uint64
	for round := 0; round < *n; round++ {
		d := 5000 + 7*round
		results := []string{
			pi(d),
			e(d),
			sqrt2(d),
			factorial(int64(2000 + round)).String(),
			harmonic(int64(800 + round)).String(),
		}
		if !strings.HasPrefix(results[0], "31415926535897932384626433832795") ||
			!strings.HasPrefix(results[1], "27182818284590452353602874713526") ||
			!strings.HasPrefix(results[2], "14142135623730950488016887242096") {
			fmt.Fprintf(os.Stderr, "bigmath: round %d: wrong constant digits\n", round)
			os.Exit(1)
		}
		for _, s := range results {
			digitsOut += uint64(len(s))
			sum.Write([]byte(s))
		}
	}
	fmt.Printf("bigmath n=%d digits=%d checksum=%016x\n", *n, digitsOut, sum.Sum64())
}
