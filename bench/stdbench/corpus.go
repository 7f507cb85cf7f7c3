package main

// A pkgSpec is one standard-library package of the corpus: which of its
// benchmarks run (go test's -bench and -skip patterns: each split at
// slashes into one pattern per sub-benchmark level) and why some are left
// out.
type pkgSpec struct {
	Path  string
	Bench string // default "."
	Skip  string
	// More are further -bench/-skip pairs, each a run of its own (go
	// test takes one of each, and a -bench pattern of several levels
	// drops the top-level benchmarks that have no sub-benchmarks).
	More []pattern
	Tags string
	Why  string // what the patterns leave out and why
}

type pattern struct{ Bench, Skip string }

// patterns are the -bench/-skip pairs of the package's runs.
func (p pkgSpec) patterns() []pattern {
	b := p.Bench
	if b == "" {
		b = "."
	}
	return append([]pattern{{b, p.Skip}}, p.More...)
}

// not64M matches a sub-benchmark name that does not start with 64M (the
// regexp package has no negative lookahead).
const not64M = `^(?:[^6].*|6|6[^4].*|64|64[^M].*)?$`

// corpus is the standard library's benchmarks that stdbench runs (Go
// 1.26: about 1000). A benchmark is left out when one operation takes
// more than about 50 ms uninstrumented (exact mode would run it once or
// twice per -benchtime), when its setup dominates its run (seconds and
// gigabytes before the timer starts), when it only measures parallel
// contention on 2 cores, or when it is one of dozens of sizes of the
// same loop (the geometric mean would weigh that loop as dozens of
// programs). compress/gzip, container/list and text/template have no
// benchmarks of their own in Go 1.26; text/template/parse stands for
// text/template. internal/strconv (where Go 1.26 moved strconv's
// conversions) and math/bits are left out: the runtime depends on them,
// kprof does not instrument them, and their test binaries, which have a
// runtime of their own, kprof test refuses or (with another build cache)
// runs uninstrumented — 168 benchmarks at about 1× that only diluted the
// figures (2026-11-28's report has them).
var corpus = []pkgSpec{
	{Path: "strings", Skip: `RepeatLarge|AnyASCII|AnyUTF8|TrimASCII|Fields|Replace$`,
		Why: "size sweeps of one loop (RepeatLarge up to 1 GiB: 1.5 s per op; IndexAny/LastIndexAny ×84, TrimASCII ×20, Fields ×20, Replace ×19)"},
	{Path: "bytes", Skip: `RepeatLarge|AnyASCII|AnyUTF8|TrimASCII|Fields|Replace$|Equal|Compare|IndexRuneUnicode|CountSingle|Portable|Easy|BufferAppendNoCopy|^Benchmark(IndexByte|Index|Count)$`,
		More: []pattern{{Bench: `^Benchmark(IndexByte|Index|Count)$/` + not64M}},
		Why:  "the 64M sizes (up to 170 ms per op) and the size sweeps that strings already has or that are assembly (Equal, Compare, IndexRuneUnicode, CountSingle, …); BufferAppendNoCopy (50 ms per op)"},
	{Path: "strconv"},
	{Path: "sort", Skip: `1e6`, Why: "Sort1e6 and Stable1e6: 0.8 s and 2.6 s per op"},
	{Path: "slices"},
	{Path: "maps"},
	{Path: "unicode/utf8"},
	{Path: "unicode"},
	{Path: "bufio"},
	{Path: "fmt"},
	{Path: "errors"},
	{Path: "encoding/json", Skip: `TypeFieldsCache`,
		Why: "TypeFieldsCache: its setup declares up to 10⁶ types with reflect (8.7 s per op and 1.5 GB at the largest size)"},
	{Path: "encoding/binary"},
	{Path: "encoding/base64"},
	{Path: "encoding/hex"},
	{Path: "encoding/csv"},
	{Path: "encoding/xml"},
	{Path: "compress/flate", Skip: `./././1e6`, Why: "the 1e6 inputs: 45–70 ms per op"},
	{Path: "compress/lzw"},
	{Path: "regexp", Skip: `^BenchmarkMatch(_onepass_regex)?$`,
		More: []pattern{{Bench: `^BenchmarkMatch$/./^(16|32|1K|32K)$`}, {Bench: `^BenchmarkMatch_onepass_regex$/^(16|32|1K|32K)$`}},
		Why:  "Match and Match_onepass_regex at 1M and 32M: 25 ms to 4.5 s per op"},
	{Path: "math/big",
		Bench: `^Benchmark(Binomial|Bitset.*|DecimalConversion|Div|Exp|Exp2|Exp3Power|ExpMont|Fibo|Float.*|GCD(10|100|1000)x(10|100|1000|10000)|Hilbert|ModInverse|ModSqrt.*|NatMul|NatSetBytes|ParseFloat.*|ProbablyPrime|QuoRem|RatCmp|ScanPi|Sqrt|ZeroShifts|String|Scan)$`,
		Skip:  `./^(20000000|2000000|1000000|100000|0x100000|0x400000|0x40000|10000)$`,
		Why:   "the word-vector kernels' size sweeps (AddVV, SubVW, MulAddVWW, LshVU, …: 400 benchmarks of assembly loops), LeafSize, IntSqr and NatSqr sweeps, GCD of 100000 words, and sizes of 10⁴ words and up (up to 3 s per op)"},
	{Path: "go/scanner"},
	{Path: "go/parser"},
	{Path: "go/printer"},
	{Path: "go/format"},
	{Path: "text/template/parse"},
	{Path: "html/template"},
	{Path: "hash/crc32"},
	{Path: "hash/fnv"},
	{Path: "crypto/sha256", Tags: "purego", Why: "built with -tags purego: the Go code instead of the assembly"},
	{Path: "image/png"},
	{Path: "archive/zip", Skip: `ReaderManyDeepDirs|ReaderManyShallowFiles`,
		Why: "ReaderManyDeepDirs and ReaderManyShallowFiles: 14.6 s and 0.5 s per op"},
	{Path: "container/heap"},
	{Path: "math/rand/v2", Skip: `Parallel|Concurrent`, Why: "the parallel benchmarks: contention on 2 shared cores"},
	{Path: "text/tabwriter", Skip: `Table/.*x100000`, Why: "Table with 100000 lines: up to 0.8 s per op"},
	{Path: "net/url"},
	{Path: "path/filepath"},
	{Path: "html"},
}

// quickCorpus is -quick's slice: two small packages, a handful of
// benchmarks, for CI (the report's shape, not its timings).
var quickCorpus = []pkgSpec{
	{Path: "strings", Bench: `^Benchmark(Index|IndexRune)$`, More: []pattern{{Bench: `^BenchmarkRepeat$/^5x`}},
		Why: "-quick: a handful of benchmarks"},
	{Path: "hash/fnv", Bench: `^BenchmarkFnv(32|64a)KB$`, Why: "-quick: a handful of benchmarks"},
}
