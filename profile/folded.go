package profile

import (
	"fmt"
	"strconv"
	"strings"
)

// AddFolded adds one folded stack to p: "f;g;h INSTRUCTIONS [SAMPLES
// [CALLS]]", the stack outermost first (the format of flame graph tools),
// each name made a Func by fn. The counts go to the context, created if
// need be, and to p's totals. p.Root must not be nil.
func (p *Profile) AddFolded(line string, fn func(name string) Func) error {
	fields := strings.Fields(line)
	if len(fields) < 2 || len(fields) > 4 {
		return fmt.Errorf("folded stack %q: want \"f;g;h INSTRUCTIONS [SAMPLES [CALLS]]\"", line)
	}
	var counts [3]int64
	for i, f := range fields[1:] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("folded stack %q: count %q is not a non-negative integer", line, f)
		}
		counts[i] = v
	}
	n := p.Root
	for _, name := range strings.Split(fields[0], ";") {
		n = n.Child(fn(name))
	}
	n.Instructions += counts[0]
	n.Samples += counts[1]
	n.Calls += counts[2]
	p.TotalInstructions += counts[0]
	p.TotalSamples += counts[1]
	return nil
}
