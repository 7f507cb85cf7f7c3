package main

// A Module is one third-party module of the corpus, pinned to a version.
type Module struct {
	Path    string
	Version string
	// Pkgs are the package patterns tested, relative to the module root.
	Pkgs []string
	// Flags are extra go test flags, the same for every run (a -skip for
	// a test that fails natively on current Go, say).
	Flags []string
	// Traits says why the module is in the corpus.
	Traits string
	// BenchSkip is the -bench mode's -skip: benchmarks too slow to run
	// instrumented 5×20 times within the mode's limit, or that need what
	// the corpus does not provide (see each).
	BenchSkip string
}

// Name is module@version.
func (m Module) Name() string { return m.Path + "@" + m.Version }

// corpus is the whole corpus: popular modules whose tests pass natively
// under go test -short, offline, in well under a minute each on 2 cores.
// Where a module's whole test suite is slow, Pkgs picks some packages.
var corpus = []Module{
	// Old language versions: no go.mod, or go.mod without a go line
	// (both mean go1.16), or go 1.7 … 1.17.
	{Path: "github.com/pkg/errors", Version: "v0.9.1", Pkgs: []string{"."},
		// Expects closure names from before Go 1.22 in stack traces.
		Flags:  []string{"-skip", "^TestStackTrace$"},
		Traits: "no go.mod; runtime.Callers"},
	{Path: "github.com/davecgh/go-spew", Version: "v1.1.1", Pkgs: []string{"./..."}, Traits: "no go.mod; unsafe reflection"},
	{Path: "github.com/pmezard/go-difflib", Version: "v1.0.0", Pkgs: []string{"./..."},
		// Its examples name functions that do not exist, which vet rejects.
		Flags:  []string{"-vet=off"},
		Traits: "no go.mod"},
	{Path: "github.com/gobwas/glob", Version: "v0.2.3", Pkgs: []string{"./..."}, Traits: "no go.mod; parser"},
	{Path: "github.com/golang/snappy", Version: "v1.0.0", Pkgs: []string{"./..."}, Traits: "no go.mod; assembly"},
	{Path: "gopkg.in/yaml.v3", Version: "v3.0.1", Pkgs: []string{"."},
		// Its limit benchmarks decode 1000 KB documents, 2.6 G
		// instructions an op (Benchmark1000KB100Aliases): at -benchtime
		// 20x -count 5 the module ran over the 4-minute -benchtimeout.
		BenchSkip: "^Benchmark1000KB",
		Traits:    "go.mod without go line; parser, reflection"},
	{Path: "github.com/google/uuid", Version: "v1.6.0", Pkgs: []string{"./..."}, Traits: "go.mod without go line"},
	{Path: "gopkg.in/yaml.v2", Version: "v2.4.0", Pkgs: []string{"."},
		// The same 1000 KB limit benchmarks as yaml.v3's (2.5 G
		// instructions an op): over the 4-minute -benchtimeout.
		BenchSkip: "^Benchmark1000KB",
		Traits:    "go 1.15; parser, reflection"},
	{Path: "github.com/julienschmidt/httprouter", Version: "v1.3.0", Pkgs: []string{"./..."}, Traits: "go 1.7; radix tree"},
	{Path: "github.com/shopspring/decimal", Version: "v1.6.0", Pkgs: []string{"./..."},
		// Benchmark_DivideOriginal and _DivideNew divide every case of
		// the division tests in each op, 480 M instructions: the module
		// ran over the 4-minute -benchtimeout inside them.
		BenchSkip: "^Benchmark_Divide",
		Traits:    "go 1.10; math/big"},
	{Path: "github.com/cespare/xxhash/v2", Version: "v2.3.0", Pkgs: []string{"./..."}, Traits: "go 1.11; assembly"},
	{Path: "github.com/json-iterator/go", Version: "v1.1.12", Pkgs: []string{".", "./extra", "./api_tests", "./misc_tests", "./any_tests"},
		// Expects encoding/json's escapes from before Go 1.22.
		Flags:  []string{"-skip", "^Test_string_encode_with_std_without_html_escape$"},
		Traits: "go 1.12; heavy reflection, unsafe"},
	{Path: "github.com/spf13/pflag", Version: "v1.1.0", Pkgs: []string{"./..."}, Traits: "go 1.12"},
	{Path: "github.com/kr/pretty", Version: "v0.3.1", Pkgs: []string{"./..."}, Traits: "go 1.12; reflection"},
	{Path: "github.com/google/shlex", Version: "v0.0.0-20191202100458-e7afc7fbc510", Pkgs: []string{"./..."}, Traits: "go 1.13; lexer"},
	{Path: "github.com/mitchellh/mapstructure", Version: "v1.5.0", Pkgs: []string{"./..."}, Traits: "go 1.14; heavy reflection"},
	{Path: "github.com/DataDog/zstd", Version: "v1.5.7", Pkgs: []string{"."}, Traits: "go 1.14; cgo (bundled C zstd)",
		// These read the file that $PAYLOAD names, and fail without it.
		BenchSkip: "^Benchmark(Ctx|Stream)?(Compression|Decompression)$"},
	{Path: "github.com/stretchr/testify", Version: "v1.12.1", Pkgs: []string{"./assert", "./require", "./mock"},
		// Look for directories that the module zip leaves out.
		Flags:  []string{"-skip", "^Test(No)?DirExists$"},
		Traits: "go 1.17; reflection"},

	// Newer language versions.
	{Path: "github.com/google/btree", Version: "v1.1.3", Pkgs: []string{"./..."}, Traits: "go 1.18; generics, recursion"},
	{Path: "github.com/BurntSushi/toml", Version: "v1.6.0", Pkgs: []string{"."}, Traits: "go 1.18; parser, reflection"},
	{Path: "github.com/hashicorp/golang-lru/v2", Version: "v2.0.7", Pkgs: []string{"./..."}, Traits: "go 1.18; generics"},
	{Path: "github.com/rivo/uniseg", Version: "v0.4.7", Pkgs: []string{"./..."}, Traits: "go 1.18; tables, state machines"},
	{Path: "github.com/sourcegraph/conc", Version: "v0.3.0", Pkgs: []string{"./..."}, Traits: "go 1.19; many goroutines, panics"},
	{Path: "go.uber.org/multierr", Version: "v1.11.0", Pkgs: []string{"./..."}, Traits: "go 1.19"},
	{Path: "github.com/gorilla/mux", Version: "v1.8.1", Pkgs: []string{"./..."}, Traits: "go 1.20; regexp, net/http"},
	{Path: "github.com/google/go-cmp", Version: "v0.7.0", Pkgs: []string{"./..."},
		// BenchmarkBytes/1MiB/… and /16MiB/… compare 1 and 16 MiB
		// slices, 2.8 G instructions an op and more: the module ran over
		// the 4-minute -benchtimeout in them.
		BenchSkip: "^BenchmarkBytes$/^(1|16)MiB$",
		Traits:    "go 1.21; deep recursion, reflection"},
	{Path: "github.com/spf13/cast", Version: "v1.10.0", Pkgs: []string{"./..."},
		// Fail natively on go1.26.
		Flags:  []string{"-skip", "^TestStringMap"},
		Traits: "go 1.21; reflection"},
	{Path: "github.com/dustin/go-humanize", Version: "v1.1.0", Pkgs: []string{"./..."}, Traits: "go 1.21; math/big"},
	{Path: "github.com/zeebo/xxh3", Version: "v1.1.0", Pkgs: []string{"."}, Traits: "go 1.22; assembly (avo)"},
	{Path: "github.com/pierrec/lz4/v4", Version: "v4.1.33", Pkgs: []string{"."},
		// Read testdata files that the module zip leaves out.
		Flags:  []string{"-skip", "^TestReader(Legacy)?$"},
		Traits: "go 1.22; assembly, goroutines"},
	{Path: "github.com/tidwall/gjson", Version: "v1.20.2", Pkgs: []string{"./..."}, Traits: "go 1.23; parser"},
	{Path: "github.com/sirupsen/logrus", Version: "v1.10.2", Pkgs: []string{"."}, Traits: "go 1.23; goroutines, reflection"},
	{Path: "github.com/mattn/go-runewidth", Version: "v0.0.31", Pkgs: []string{"./..."}, Traits: "go 1.23; tables",
		// Checks a total that holds for one iteration only: it fails
		// under plain go test -benchtime 20x too.
		BenchSkip: "^BenchmarkRuneWidthAll$"},
	{Path: "github.com/go-chi/chi/v5", Version: "v5.5.0", Pkgs: []string{"./..."}, Traits: "go 1.24; net/http, goroutines"},
	{Path: "github.com/valyala/fastjson", Version: "v1.6.10", Pkgs: []string{"./..."}, Traits: "go 1.24; parser, sync.Pool"},
	{Path: "github.com/klauspost/compress", Version: "v1.20.4", Pkgs: []string{"./huff0", "./fse", "./zlib", "./gzip"}, Traits: "go 1.25; assembly, goroutines"},
	{Path: "golang.org/x/sync", Version: "v0.25.0", Pkgs: []string{"./..."}, Traits: "go 1.26; many goroutines"},
	{Path: "golang.org/x/crypto", Version: "v0.59.0", Pkgs: []string{"./blake2b", "./chacha20", "./chacha20poly1305", "./curve25519", "./poly1305", "./argon2"}, Traits: "go 1.26; assembly"},

	// The second set (2026-11-29): modules no kprof code was written or
	// tuned against, picked for shapes the first set has few of:
	// interpreters and virtual machines, code generators' output,
	// unsafe-heavy serializers, compression, generics-heavy libraries.
	{Path: "github.com/emirpasic/gods", Version: "v1.18.1", Pkgs: []string{"./..."}, Traits: "data structures, interfaces"},
	{Path: "github.com/golang/groupcache", Version: "v0.0.0-20241129210726-2c02b8208cf8", Pkgs: []string{"./lru", "./consistenthash", "./singleflight"}, Traits: "no go.mod"},
	{Path: "github.com/agnivade/levenshtein", Version: "v1.2.2", Pkgs: []string{"./..."}, Traits: "dynamic programming"},
	{Path: "github.com/Masterminds/semver/v3", Version: "v3.5.0", Pkgs: []string{"./..."}, Traits: "parser, regexp"},
	{Path: "github.com/hashicorp/go-version", Version: "v1.9.0", Pkgs: []string{"./..."}, Traits: "parser"},
	{Path: "github.com/bits-and-blooms/bitset", Version: "v1.29.0", Pkgs: []string{"./..."}, Traits: "bit twiddling, math/bits"},
	{Path: "github.com/montanaflynn/stats", Version: "v0.14.0", Pkgs: []string{"./..."}, Traits: "floating point"},
	{Path: "github.com/yuin/goldmark", Version: "v1.8.7", Pkgs: []string{"./..."}, Traits: "markdown parser, interfaces"},
	{Path: "github.com/gomarkdown/markdown", Version: "v0.0.0-20261107153045-a51d70be185e", Pkgs: []string{"./..."}, Traits: "markdown parser"},
	{Path: "github.com/andybalholm/brotli", Version: "v1.3.0", Pkgs: []string{"."}, Traits: "compression, large functions"},
	{Path: "github.com/ulikunitz/xz", Version: "v0.5.17", Pkgs: []string{"./..."}, Traits: "compression, LZMA"},
	{Path: "github.com/tidwall/btree", Version: "v1.8.2", Pkgs: []string{"./..."},
		// Large randomized tests: plain go test took 83 s on 2 cores,
		// 59 s without the first five of these, and exact mode ran
		// over the 5-minute limit both times.
		Flags:  []string{"-skip", "^(TestContiguousDelete.*|TestGenericRandom|TestBTree|TestMapRandom)$"},
		Traits: "generics, copy-on-write"},
	{Path: "github.com/puzpuzpuz/xsync/v4", Version: "v4.5.0", Pkgs: []string{"."}, Traits: "generics, atomics, unsafe, many goroutines"},
	{Path: "github.com/pelletier/go-toml/v2", Version: "v2.4.3", Pkgs: []string{"."}, Traits: "parser, unsafe, reflection"},
	{Path: "github.com/goccy/go-json", Version: "v0.12.0", Pkgs: []string{"."},
		// Measures the memory of decoding large documents again and
		// again: 5 minutes in exact mode, where the rest takes seconds.
		Flags:  []string{"-skip", "^TestDecodedFootprint"},
		Traits: "unsafe-heavy JSON, opcode VM"},
	{Path: "github.com/vmihailenco/msgpack/v5", Version: "v5.4.1", Pkgs: []string{"./..."}, Traits: "reflection, serializer"},
	{Path: "google.golang.org/protobuf", Version: "v1.36.12", Pkgs: []string{"./proto", "./encoding/protowire", "./encoding/protojson", "./encoding/prototext"}, Traits: "generated code, unsafe, reflection"},
	{Path: "github.com/expr-lang/expr", Version: "v1.17.8", Pkgs: []string{".", "./vm", "./parser/...", "./checker"}, Traits: "expression compiler and VM"},
	{Path: "github.com/yuin/gopher-lua", Version: "v1.1.2", Pkgs: []string{"."}, Traits: "Lua VM, big switch dispatch"},
	{Path: "github.com/itchyny/gojq", Version: "v0.12.20", Pkgs: []string{"."}, Traits: "jq interpreter, iterators"},
	{Path: "github.com/dop251/goja", Version: "v0.0.0-20260917113740-793a2a65c13b", Pkgs: []string{"."}, Traits: "JavaScript VM, very large package"},
	{Path: "github.com/alecthomas/participle/v2", Version: "v2.1.4", Pkgs: []string{"."}, Traits: "parser generator, generics, reflection"},
	{Path: "github.com/cockroachdb/apd/v3", Version: "v3.2.3", Pkgs: []string{"."}, Traits: "decimal arithmetic"},
	{Path: "gonum.org/v1/gonum", Version: "v0.17.0", Pkgs: []string{"./mat", "./stat", "./floats"}, Traits: "numerics, assembly"},
	{Path: "go.uber.org/zap", Version: "v1.28.0", Pkgs: []string{".", "./zapcore"}, Traits: "logging, sync, reflection"},
	{Path: "github.com/rs/zerolog", Version: "v1.35.1", Pkgs: []string{"."}, Traits: "logging, zero allocation"},
	{Path: "github.com/golang-jwt/jwt/v5", Version: "v5.3.1", Pkgs: []string{"."}, Traits: "crypto"},
	{Path: "github.com/gorilla/websocket", Version: "v1.5.3", Pkgs: []string{"."}, Traits: "net loopback, goroutines"},
	{Path: "github.com/klauspost/cpuid/v2", Version: "v2.4.2", Pkgs: []string{"."}, Traits: "assembly, CPU feature tables"},
}

// quick is the fast subset that CI runs (-quick): a module without
// go.mod, one whose go.mod has no go line and assembly, a reflective
// parser declaring go 1.15, a goroutine-heavy one and a generic,
// recursive one. All five pass in every mode, so -quick -strict gates.
var quick = []string{
	"github.com/pkg/errors",
	"github.com/golang/snappy",
	"gopkg.in/yaml.v2",
	"golang.org/x/sync",
	"github.com/google/btree",
}
