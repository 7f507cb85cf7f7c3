package agent

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"
	"github.com/kprof/kprof/profile"
)

// The hand-written encoder's output is a valid pprof profile with the
// same contexts and counts, leaf first.
func TestEncodePprof(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 100})
	a.Register()
	a.Sample([]*Func{fa}, 0, 10)
	a.Sample([]*Func{fa, fb}, 0, 20)
	a.Sample([]*Func{fa, fb, fc}, 0, 30)
	a.Sample([]*Func{fa, fc}, 0, 40)
	a.Exit(0)
	p := a.Profile(profile.Meta{Program: "t", GOOS: "linux", GOARCH: "amd64"})
	var buf bytes.Buffer
	opt := PprofOptions{TimeNanos: 1e18, DurationNanos: 5e9, Comments: []string{"env=prod", "program=t"}}
	if err := WritePprof(&buf, p, opt); err != nil {
		t.Fatal(err)
	}
	q, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if len(q.SampleType) != 2 || q.SampleType[0].Type != "samples" || q.SampleType[0].Unit != "count" ||
		q.SampleType[1].Type != "instructions" || q.SampleType[1].Unit != "count" {
		t.Errorf("sample types %v", q.SampleType)
	}
	if q.TimeNanos != 1e18 || q.DurationNanos != 5e9 || q.Period != 100 {
		t.Errorf("time %d duration %d period %d", q.TimeNanos, q.DurationNanos, q.Period)
	}
	if strings.Join(q.Comments, ";") != "env=prod;program=t" {
		t.Errorf("comments %q", q.Comments)
	}
	got := map[string][2]int64{}
	for _, s := range q.Sample {
		var names []string
		for _, l := range s.Location {
			if len(l.Line) != 1 {
				t.Fatalf("location %d has %d lines", l.ID, len(l.Line))
			}
			f := l.Line[0].Function
			if l.Line[0].Line != f.StartLine || f.Filename == "" {
				t.Errorf("%s: line %d, start %d, file %q", f.Name, l.Line[0].Line, f.StartLine, f.Filename)
			}
			names = append(names, f.Name)
		}
		got[strings.Join(names, ";")] = [2]int64{s.Value[0], s.Value[1]}
	}
	want := map[string][2]int64{"a": {1, 10}, "b;a": {1, 20}, "c;b;a": {1, 30}, "c;a": {1, 40}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples (leaf first) %v, want %v", got, want)
	}
}

// Delta of two snapshots is what was counted in between.
func TestDelta(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeExact})
	a.Register()
	a.Sample([]*Func{fa}, 0, 10)
	a.Sample([]*Func{fa, fb}, 0, 20)
	p1 := a.Snapshot(profile.Meta{})
	a.Sample([]*Func{fa, fb}, 0, 5)
	a.Sample([]*Func{fa, fc}, 0, 7)
	p2 := a.Snapshot(profile.Meta{})
	d := Delta(p1, p2)
	if err := d.CheckValid(); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	d.Walk(func(stack []profile.Func, n *profile.Node) {
		if n.Instructions == 0 {
			return
		}
		var s []string
		for _, f := range stack {
			s = append(s, f.Name)
		}
		got[strings.Join(s, ";")] = n.Instructions
	})
	if fmt.Sprint(got) != fmt.Sprint(map[string]int64{"a;b": 5, "a;c": 7}) || d.TotalInstructions != 12 {
		t.Errorf("delta %v total %d, want a;b 5, a;c 7, total 12", got, d.TotalInstructions)
	}
	m, err := profile.Merge(p1, d)
	if err != nil {
		t.Fatal(err)
	}
	if m.TotalInstructions != p2.TotalInstructions || m.SumInstructions() != p2.SumInstructions() {
		t.Errorf("first snapshot + delta: %d/%d, second snapshot %d/%d", m.TotalInstructions, m.SumInstructions(), p2.TotalInstructions, p2.SumInstructions())
	}
}

// BenchmarkSnapshotPause measures the part of a snapshot that holds the
// agent's lock with the world stopped (in kprof builds): claiming the
// running goroutines' tails and copying every goroutine's tree, here 100
// goroutine states of 200 contexts each. (Outside kprof builds the world
// is not stopped and there are no tails; the copy is the pause.)
func BenchmarkSnapshotPause(b *testing.B) {
	a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 100})
	fs := make([]*Func, 200)
	for i := range fs {
		fs[i] = &Func{Name: fmt.Sprintf("f%d", i)}
	}
	for g := 0; g < 100; g++ {
		st := newState(false, a.pool)
		st.owner = a.id
		for i := range fs {
			c := st.child(&st.root, fs[(i+g)%len(fs)])
			c.samples, c.instr = 1, 100
		}
		st.all = a.all
		a.all = st
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.flushRunning(true)
		a.mu.Lock()
		restart := a.stopped()
		for g := a.all; g != nil; g = g.all {
			a.scratch.merge(g, false)
		}
		restart()
		a.scratch.root = node{}
		a.scratch.nodes.reset()
		clear(a.scratch.kids)
		a.mu.Unlock()
	}
}

// MetaComments: the Meta's fields, then one comment per label.
func TestMetaComments(t *testing.T) {
	for _, tc := range []struct {
		meta profile.Meta
		want string
	}{
		{profile.Meta{Mode: "exact", KprofVersion: "1", Program: "p", GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "arm64"},
			"kprof 1: program p, mode exact|go1.26.8 linux/arm64"},
		{profile.Meta{Mode: "sample", Granularity: 10000, Jitter: 100, Seed: 1, KprofVersion: "1", Program: "p", GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64",
			Labels: []profile.Label{{Key: "env", Value: "prod"}, {Key: "region", Value: ""}, {Key: "version", Value: "v1.2.3"}}},
			"kprof 1: program p, mode sample|granularity 10000, jitter 100, seed 1|go1.26.8 linux/amd64|env=prod|region=|version=v1.2.3"},
	} {
		if got := strings.Join(MetaComments(tc.meta), "|"); got != tc.want {
			t.Errorf("MetaComments(%+v):\n got %q\nwant %q", tc.meta, got, tc.want)
		}
	}
}

// ServeLive answers over HTTP/1.1 what Respond answers; go's HTTP client
// reads it.
func TestServeLive(t *testing.T) {
	if raceEnabled {
		// Outside kprof builds the counter has one state for all
		// goroutines (counter/state_plain.go): the server's goroutines
		// suspending counting race on it there, and only there.
		t.Skip("the plain counter's single state is shared by the server's goroutines")
	}
	a := NewCCT(Settings{Mode: profile.ModeExact})
	a.Register()
	a.Sample([]*Func{fa, fb}, 0, 20)
	labels := []profile.Label{{Key: "env", Value: "test"}, {Key: "team", Value: "a<b"}}
	l := NewLive(a, func() profile.Meta {
		return profile.Meta{Program: "t<x>", GoVersion: "go1.x", GOOS: "linux", GOARCH: "amd64", Labels: labels}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := ServeLive(addr, l); err != nil {
		t.Fatal(err)
	}
	if err := ServeLive(addr, l); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("second ServeLive on %s: %v, want address already in use", addr, err)
	}
	for _, bad := range []string{"nonsense", "1.2.3:80", "[zz]:80", "127.0.0.1:99999"} {
		if err := ServeLive(bad, l); err == nil {
			t.Errorf("ServeLive(%q) did not fail", bad)
		}
	}
	get := func(path string) (int, string, []byte) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	if code, ctype, b := get("/debug/kprof/"); code != 200 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(string(b), "t&lt;x&gt;") ||
		!strings.Contains(string(b), "labels: env=test team=a&lt;b") {
		t.Errorf("index: %d %s\n%s", code, ctype, b)
	}
	code, _, b := get("/debug/kprof/snapshot?format=kprof")
	p, err := profile.Parse(bytes.NewReader(b))
	if code != 200 || err != nil || p.TotalInstructions != 20 || fmt.Sprint(p.Meta.Labels) != "[{env test} {team a<b}]" {
		t.Fatalf("snapshot?format=kprof: %d %v %+v", code, err, p)
	}
	code, _, b = get("/debug/kprof/snapshot")
	q, err := pprofile.Parse(bytes.NewReader(b))
	if code != 200 || err != nil || q.CheckValid() != nil || len(q.Sample) != 1 || q.Sample[0].Value[1] != 20 {
		t.Fatalf("snapshot: %d %v %v", code, err, q)
	}
	if got, want := strings.Join(q.Comments, ";"), "kprof "+Version+": program t<x>, mode exact;go1.x linux/amd64;env=test;team=a<b"; got != want {
		t.Errorf("snapshot's comments %q, want %q", got, want)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		// (A goroutine of its own: Sample runs on the goroutine it profiles.)
		done := make(chan bool)
		go func() {
			a.Register()
			a.Sample([]*Func{fa, fc}, 0, 7)
			close(done)
		}()
		<-done
	}()
	code, _, b = get("/debug/kprof/profile?seconds=1")
	q, err = pprofile.Parse(bytes.NewReader(b))
	if code != 200 || err != nil || q.CheckValid() != nil || len(q.Sample) != 1 || q.Sample[0].Value[1] != 7 || q.Sample[0].Location[0].Line[0].Function.Name != "c" {
		t.Fatalf("profile: %d %v %v", code, err, q)
	}
	for path, want := range map[string]int{"/debug/kprof/profile?seconds=0": 400, "/debug/kprof/snapshot?format=x": 400, "/nothing": 404} {
		if code, _, _ := get(path); code != want {
			t.Errorf("%s: status %d, want %d", path, code, want)
		}
	}
}

// A cost profile's pprof form names its counts cost/nanoseconds, rounded
// from picoseconds, as reports.Pprof does.
func TestEncodePprofCost(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeExact})
	a.Register()
	a.Sample([]*Func{fa}, 0, 2_400)
	a.Sample([]*Func{fa, fb}, 0, 1_600)
	a.Exit(0)
	p := a.Profile(profile.Meta{Program: "t"})
	p.Meta.Metric, p.Meta.MetricTable = "cost", "t 1" // (what a -metric cost build records)
	var buf bytes.Buffer
	if err := WritePprof(&buf, p, PprofOptions{}); err != nil {
		t.Fatal(err)
	}
	q, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if st := q.SampleType[1]; st.Type != "cost" || st.Unit != "nanoseconds" || q.PeriodType.Type != "cost" {
		t.Errorf("sample type %v, period type %v", st, q.PeriodType)
	}
	var sum int64
	for _, s := range q.Sample {
		sum += s.Value[1]
	}
	if sum != 4 {
		t.Errorf("%d ns in all, want 4 (2.4 + 1.6, each rounded)", sum)
	}
}
