package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"regexp"
	"strings"
)

// DefaultThreshold is the threshold of a benchmark no configuration
// rule gives one: 1%. instructions/op is exact, so any threshold catches
// the changes above it on a single run; 1% lets small intended changes
// through without touching the configuration.
var DefaultThreshold = MustPercent("1%")

// Percent is a non-negative percentage such as 1% or 0.5%, kept exactly
// as written (a decimal), so thresholds compare exactly. The zero Percent
// is 0%.
type Percent struct {
	r    *big.Rat
	text string // as written, without "%"
}

var percentSyntax = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?%?$`)

// ParsePercent parses a percentage: decimal digits with an optional
// fraction and an optional "%" ("1%", "0.5%", "2").
func ParsePercent(s string) (Percent, error) {
	t := strings.TrimSpace(s)
	if !percentSyntax.MatchString(t) {
		return Percent{}, fmt.Errorf("%q is not a percentage such as 1%% or 0.5%%", s)
	}
	r, ok := new(big.Rat).SetString(strings.TrimSuffix(t, "%"))
	if !ok {
		return Percent{}, fmt.Errorf("%q is not a percentage such as 1%% or 0.5%%", s)
	}
	return Percent{r, strings.TrimSuffix(t, "%")}, nil
}

// MustPercent is ParsePercent for constants; it panics on a malformed
// percentage.
func MustPercent(s string) Percent {
	p, err := ParsePercent(s)
	if err != nil {
		panic(err)
	}
	return p
}

func (p Percent) rat() *big.Rat {
	if p.r == nil {
		return new(big.Rat)
	}
	return p.r
}

// Float64 returns the percentage as a number (0.5 for 0.5%).
func (p Percent) Float64() float64 {
	f, _ := p.rat().Float64()
	return f
}

// String returns the percentage as written, with a "%": "0.5%".
func (p Percent) String() string {
	if p.r == nil {
		return "0%"
	}
	return p.text + "%"
}

// MarshalJSON writes the percentage as a string, "0.5%".
func (p Percent) MarshalJSON() ([]byte, error) { return json.Marshal(p.String()) }

// UnmarshalJSON reads a percentage written as a string ("0.5%") or a
// number (0.5, meaning 0.5%).
func (p *Percent) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] != '"' {
		s = string(b)
	} else if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	q, err := ParsePercent(s)
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Config is the configuration of kprof gate, kept in the repository
// (by default .kprof/gate.json in the module's root directory) as JSON:
//
//	{
//	  "threshold": "1%",
//	  "unit": "instructions/op",
//	  "allow_missing": false,
//	  "baseline_dir": "baselines",
//	  "benchmarks": [
//	    {"match": "^BenchmarkParse", "threshold": "0.1%"},
//	    {"match": "^BenchmarkEncode/size=large$", "max": 250000},
//	    {"match": "Parallel", "threshold": "5%"}
//	  ]
//	}
//
// Every field is optional; unknown fields are errors, so a misspelt one
// does not silently leave a limit out.
type Config struct {
	// Threshold is the default threshold (default DefaultThreshold).
	Threshold *Percent `json:"threshold,omitempty"`
	// Unit is the metric compared (default instructions/op), as written
	// in the benchmark output: "ns/op", "B/op", "allocs/op", ….
	Unit string `json:"unit,omitempty"`
	// AllowMissing accepts benchmarks that are only in one input (added
	// or removed); otherwise they are errors.
	AllowMissing bool `json:"allow_missing,omitempty"`
	// BaselineDir is where kprof gate keeps saved baselines, relative to
	// the configuration file's directory (default: baselines, beside the
	// file).
	BaselineDir string `json:"baseline_dir,omitempty"`
	// Benchmarks are per-benchmark rules. For each benchmark the
	// threshold, max and min each come from the first rule that matches
	// its name and sets them; the threshold falls back to the default.
	Benchmarks []Rule `json:"benchmarks,omitempty"`

	compiled bool
}

// Rule sets limits for the benchmarks whose names match a regular
// expression.
type Rule struct {
	// Match is a regular expression (Go syntax, unanchored as go test
	// -bench's: "^BenchmarkFoo$" for exactly one) matched against the
	// benchmark's full name without its -GOMAXPROCS suffix, sub-benchmarks
	// included: "BenchmarkEncode/size=large".
	Match string `json:"match"`
	// Threshold overrides the default threshold.
	Threshold *Percent `json:"threshold,omitempty"`
	// Max and Min are absolute limits on the new value, in the gate's
	// unit: above Max (below Min) is a regression whatever the old value.
	Max *float64 `json:"max,omitempty"`
	Min *float64 `json:"min,omitempty"`

	re *regexp.Regexp
}

// ParseGateConfig parses a configuration; name (the file's name) starts
// its errors, which give the line of a JSON syntax error.
func ParseGateConfig(data []byte, name string) (*Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d: %v", name, lineOf(data, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s:%d: %s: want a %v", name, lineOf(data, te.Offset), te.Field, te.Type)
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value", name)
	}
	if err := c.compile(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &c, nil
}

// LoadConfig reads the configuration file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return ParseGateConfig(data, path)
}

func lineOf(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

// compile checks the rules and compiles their patterns.
func (c *Config) compile() error {
	if c.compiled {
		return nil
	}
	for i := range c.Benchmarks {
		r := &c.Benchmarks[i]
		if r.Match == "" {
			return fmt.Errorf("benchmark rule %d has no \"match\" pattern", i+1)
		}
		re, err := regexp.Compile(r.Match)
		if err != nil {
			return fmt.Errorf("benchmark rule %d: match %q: %v", i+1, r.Match, err)
		}
		if r.Threshold == nil && r.Max == nil && r.Min == nil {
			return fmt.Errorf("benchmark rule %d (match %q) sets no threshold, max or min", i+1, r.Match)
		}
		if r.Max != nil && r.Min != nil && *r.Min > *r.Max {
			return fmt.Errorf("benchmark rule %d (match %q): min %v is above max %v", i+1, r.Match, *r.Min, *r.Max)
		}
		r.re = re
	}
	c.compiled = true
	return nil
}

func (c *Config) unit() string {
	if c.Unit == "" {
		return UnitInstructions
	}
	return c.Unit
}

func (c *Config) threshold() Percent {
	if c.Threshold == nil {
		return DefaultThreshold
	}
	return *c.Threshold
}

type limits struct {
	threshold Percent
	max, min  *float64
}

// limits returns the limits of the named benchmark, marking the rules
// that match it in used.
func (c *Config) limits(name string, used []bool) limits {
	var l limits
	var threshold *Percent
	for i, r := range c.Benchmarks {
		if !r.re.MatchString(name) {
			continue
		}
		used[i] = true
		if threshold == nil {
			threshold = r.Threshold
		}
		if l.max == nil {
			l.max = r.Max
		}
		if l.min == nil {
			l.min = r.Min
		}
	}
	l.threshold = c.threshold()
	if threshold != nil {
		l.threshold = *threshold
	}
	return l
}
