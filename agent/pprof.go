package agent

import (
	"io"
	"slices"

	"github.com/kprof/kprof/profile"
)

// A minimal encoder of the pprof format (the profile.proto message of
// github.com/google/pprof, gzipped), written out by hand: the agent is
// linked into every program kprof builds and depends on the standard
// library only. It writes what go tool pprof, Grafana Pyroscope and Parca
// read: the sample types samples/count and instructions/count, one
// function and one location per kprof function (the location's line is
// the declaration line: kprof counts per function, not per line), and a
// sample per calling context with counts, its locations leaf first.

// Field numbers of profile.proto.
const (
	pbProfileSampleType    = 1
	pbProfileSample        = 2
	pbProfileLocation      = 4
	pbProfileFunction      = 5
	pbProfileStringTable   = 6
	pbProfileTimeNanos     = 9
	pbProfileDurationNanos = 10
	pbProfilePeriodType    = 11
	pbProfilePeriod        = 12
	pbProfileComment       = 13

	pbValueTypeType = 1
	pbValueTypeUnit = 2

	pbSampleLocationID = 1
	pbSampleValue      = 2

	pbLocationID   = 1
	pbLocationLine = 4

	pbLineFunctionID = 1
	pbLineLine       = 2

	pbFunctionID         = 1
	pbFunctionName       = 2
	pbFunctionSystemName = 3
	pbFunctionFilename   = 4
	pbFunctionStartLine  = 5
)

// pbuf appends protobuf fields to a byte slice.
type pbuf struct{ b []byte }

func (p *pbuf) varint(x uint64) {
	for x >= 0x80 {
		p.b = append(p.b, byte(x)|0x80)
		x >>= 7
	}
	p.b = append(p.b, byte(x))
}

// key appends a field's tag: wire type 0 (varint) or 2 (length-delimited).
func (p *pbuf) key(field, wire int) { p.varint(uint64(field)<<3 | uint64(wire)) }

// uint64Field appends a varint field, omitted when zero (proto3).
func (p *pbuf) uint64Field(field int, x uint64) {
	if x == 0 {
		return
	}
	p.key(field, 0)
	p.varint(x)
}

func (p *pbuf) int64Field(field int, x int64) { p.uint64Field(field, uint64(x)) }

// bytesField appends a length-delimited field.
func (p *pbuf) bytesField(field int, b []byte) {
	p.key(field, 2)
	p.varint(uint64(len(b)))
	p.b = append(p.b, b...)
}

// packed appends a packed repeated varint field.
func (p *pbuf) packed(field int, xs []uint64) {
	if len(xs) == 0 {
		return
	}
	var q pbuf
	for _, x := range xs {
		q.varint(x)
	}
	p.bytesField(field, q.b)
}

// PprofOptions are what a pprof profile carries besides the counts.
type PprofOptions struct {
	TimeNanos     int64    // when the profile (or its window) started, Unix nanoseconds
	DurationNanos int64    // the window's length (0: not a window)
	Comments      []string // shown by go tool pprof -comments and its header
}

// WritePprof writes p as a gzipped pprof protobuf profile.
func WritePprof(w io.Writer, p *profile.Profile, opt PprofOptions) error {
	_, err := w.Write(gzipStored(EncodePprof(p, opt)))
	return err
}

// EncodePprof returns p as an uncompressed pprof protobuf message.
func EncodePprof(p *profile.Profile, opt PprofOptions) []byte {
	strs := []string{""} // the string table; entry 0 is "" by definition
	index := map[string]int64{"": 0}
	str := func(s string) int64 {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = int64(len(strs))
		strs = append(strs, s)
		return int64(len(strs) - 1)
	}
	var out, msg pbuf
	valueType := func(field int, typ, unit string) {
		msg.b = msg.b[:0]
		msg.int64Field(pbValueTypeType, str(typ))
		msg.int64Field(pbValueTypeUnit, str(unit))
		out.bytesField(field, msg.b)
	}
	// (Named as reports.Pprof names them: cost in nanoseconds.)
	counted, unit, div := p.Meta.SampleType()
	valueType(pbProfileSampleType, "samples", "count")
	valueType(pbProfileSampleType, counted, unit)

	// One function (and location, with the same id) per kprof function.
	funcs := map[profile.Func]uint64{}
	var order []profile.Func
	id := func(f profile.Func) uint64 {
		if i, ok := funcs[f]; ok {
			return i
		}
		i := uint64(len(order) + 1)
		funcs[f] = i
		order = append(order, f)
		return i
	}
	var locs []uint64
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		if n.Samples == 0 && n.Instructions == 0 {
			return
		}
		locs = locs[:0]
		for i := len(stack) - 1; i >= 0; i-- {
			locs = append(locs, id(stack[i]))
		}
		msg.b = msg.b[:0]
		msg.packed(pbSampleLocationID, locs)
		msg.packed(pbSampleValue, []uint64{uint64(n.Samples), uint64((n.Instructions + div/2) / div)})
		out.bytesField(pbProfileSample, msg.b)
	})
	var line pbuf
	for i, f := range order {
		line.b = line.b[:0]
		line.uint64Field(pbLineFunctionID, uint64(i+1))
		line.int64Field(pbLineLine, int64(f.Line))
		msg.b = msg.b[:0]
		msg.uint64Field(pbLocationID, uint64(i+1))
		msg.bytesField(pbLocationLine, line.b)
		out.bytesField(pbProfileLocation, msg.b)
	}
	for i, f := range order {
		msg.b = msg.b[:0]
		msg.uint64Field(pbFunctionID, uint64(i+1))
		name := str(f.Name)
		msg.int64Field(pbFunctionName, name)
		msg.int64Field(pbFunctionSystemName, name)
		msg.int64Field(pbFunctionFilename, str(f.File))
		msg.int64Field(pbFunctionStartLine, int64(f.Line))
		out.bytesField(pbProfileFunction, msg.b)
	}
	out.int64Field(pbProfileTimeNanos, opt.TimeNanos)
	out.int64Field(pbProfileDurationNanos, opt.DurationNanos)
	valueType(pbProfilePeriodType, counted, unit)
	out.int64Field(pbProfilePeriod, (p.Meta.Granularity+div/2)/div)
	comments := make([]uint64, len(opt.Comments))
	for i, c := range opt.Comments {
		comments[i] = uint64(str(c))
	}
	out.packed(pbProfileComment, comments)
	// The string table last: every index is known by now.
	for _, s := range slices.Clip(strs) {
		out.key(pbProfileStringTable, 2)
		out.varint(uint64(len(s)))
		out.b = append(out.b, s...)
	}
	return out.b
}
