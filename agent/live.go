package agent

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kprof/kprof/profile"
)

// Delta returns what cur counted beyond prev, two snapshots of the same
// run (Snapshot), prev first: each context's counts in cur less those in
// prev, the contexts with nothing left dropped. It has cur's Meta.
func Delta(prev, cur *profile.Profile) *profile.Profile {
	d := cur.Copy()
	d.TotalInstructions = max(cur.TotalInstructions-prev.TotalInstructions, 0)
	d.TotalSamples = max(cur.TotalSamples-prev.TotalSamples, 0)
	type pair struct{ d, p *profile.Node }
	todo := []pair{{d.Root, prev.Root}}
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if x.p == nil {
			continue
		}
		// Counts only grow in a run: a negative difference (none is
		// expected) is clamped, never written.
		x.d.Samples = max(x.d.Samples-x.p.Samples, 0)
		x.d.Instructions = max(x.d.Instructions-x.p.Instructions, 0)
		x.d.Calls = max(x.d.Calls-x.p.Calls, 0)
		for _, c := range x.d.Children {
			todo = append(todo, pair{c, x.p.Find(c.Func)})
		}
	}
	prune(d.Root)
	return d
}

// Live answers the requests of kprof's live profiles of an agent while
// the program runs: KPROF_HTTP serves it (ServeLive); a program with its
// own HTTP server can mount it (Respond).
//
// It depends on no networking package: package agent is linked into every
// program kprof builds, and net/http (with crypto/tls, and net with
// runtime/cgo) would make every binary larger and add its packages'
// initialisation to every profile, KPROF_HTTP set or not.
type Live struct {
	a     *CCT
	meta  func() profile.Meta
	start time.Time
}

// NewLive returns the live profiles of agent a; meta gives each profile's
// Meta, whose labels also go into every pprof profile's comments
// (MetaComments).
func NewLive(a *CCT, meta func() profile.Meta) *Live {
	return &Live{a: a, meta: meta, start: time.Now()}
}

var running *Live

// SetLive makes l the program's live profiles (package auto does, with
// its agent); Running returns them, nil if there are none (KPROF_MODE=off
// or a custom agent).
func SetLive(l *Live) { running = l }

// Running returns the live profiles SetLive set.
func Running() *Live { return running }

// MaxSeconds bounds the window of /debug/kprof/profile.
const MaxSeconds = 3600

// Respond answers a GET of path (from /debug/kprof/ on) with query its
// raw query string, with counting suspended on the calling goroutine:
//
//	/debug/kprof/profile?seconds=N  what the program counted in the next N
//	                                seconds (default 30), gzipped pprof
//	/debug/kprof/snapshot           everything counted since start, pprof;
//	                                ?format=kprof: kprof's own format
//	/debug/kprof/                   an index of these
//
// It returns the HTTP status, the content type and the body. A program
// with its own HTTP server mounts package kprofhttp's Handler, which
// calls it:
//
//	mux.Handle("/debug/kprof/", kprofhttp.Handler())
func (l *Live) Respond(path, query string) (status int, contentType string, body []byte) {
	Suspend(func() { status, contentType, body = l.respond(path, query) })
	return
}

const (
	textType   = "text/plain; charset=utf-8"
	binaryType = "application/octet-stream"
)

func (l *Live) respond(path, query string) (int, string, []byte) {
	q := map[string]string{}
	for _, kv := range strings.Split(query, "&") {
		if k, v, _ := strings.Cut(kv, "="); k != "" {
			q[k] = v
		}
	}
	switch path {
	case "/debug/kprof/":
		return 200, "text/html; charset=utf-8", l.index("")
	case "/debug/kprof":
		return 200, "text/html; charset=utf-8", l.index("kprof/")
	case "/debug/kprof/profile":
		secs := int64(30)
		if s, ok := q["seconds"]; ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 || n > MaxSeconds {
				return 400, textType, fmt.Appendf(nil, "seconds=%q: want an integer from 1 to %d\n", s, MaxSeconds)
			}
			secs = n
		}
		start := time.Now()
		prev := l.a.Snapshot(l.meta())
		time.Sleep(time.Until(start.Add(time.Duration(secs) * time.Second)))
		cur := l.a.Snapshot(l.meta())
		d := Delta(prev, cur)
		return 200, binaryType, l.pprof(d, PprofOptions{TimeNanos: start.UnixNano(), DurationNanos: time.Since(start).Nanoseconds()})
	case "/debug/kprof/snapshot":
		p := l.a.Snapshot(l.meta())
		switch f := q["format"]; f {
		case "kprof":
			var b bytes.Buffer
			if err := p.Write(&b); err != nil {
				return 500, textType, []byte(err.Error() + "\n")
			}
			return 200, binaryType, b.Bytes()
		case "", "pprof":
			return 200, binaryType, l.pprof(p, PprofOptions{TimeNanos: l.start.UnixNano(), DurationNanos: time.Since(l.start).Nanoseconds()})
		default:
			return 400, textType, fmt.Appendf(nil, "format=%q: want pprof or kprof\n", f)
		}
	}
	return 404, textType, []byte("404 page not found\n")
}

func (l *Live) pprof(p *profile.Profile, opt PprofOptions) []byte {
	opt.Comments = MetaComments(p.Meta)
	return gzipStored(EncodePprof(p, opt))
}

// index returns the index page; its links are relative, to base (""
// from /debug/kprof/, "kprof/" from /debug/kprof), so that they work
// wherever a program mounts the endpoints.
func (l *Live) index(base string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<html><head><title>/debug/kprof/</title></head><body>
<h1>kprof: %s</h1>
<p>mode %s, up %s; labels: %s</p>
<ul>
<li><a href="%[5]sprofile?seconds=30">profile?seconds=30</a>: what every goroutine counted in the next 30 seconds (instructions and samples per calling context), gzipped pprof: <code>go tool pprof http://HOST/debug/kprof/profile?seconds=30</code></li>
<li><a href="%[5]ssnapshot">snapshot</a>: everything counted since the program started, pprof</li>
<li><a href="%[5]ssnapshot?format=kprof">snapshot?format=kprof</a>: the same in kprof's format, for kprof report and kprof compare</li>
</ul></body></html>
`, escape(l.meta().Program), escape(l.a.set.Mode), time.Since(l.start).Round(time.Second), escape(strings.Join(labelStrings(l.meta().Labels), " ")), base)
	return b.Bytes()
}

// escape escapes s for HTML text.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// MetaComments returns what a profile's Meta says, as pprof comments:
// kprof's version, the program and the mode, the sampling settings, the
// Go version and platform, then one comment "key=value" per label.
func MetaComments(m profile.Meta) []string {
	c := []string{"kprof " + m.KprofVersion + ": program " + m.Program + ", mode " + m.Mode}
	if m.Mode == profile.ModeSample {
		c = append(c, fmt.Sprintf("granularity %d, jitter %d, seed %d", m.Granularity, m.Jitter, m.Seed))
	}
	c = append(c, m.GoVersion+" "+m.GOOS+"/"+m.GOARCH)
	return append(c, labelStrings(m.Labels)...)
}

// labelStrings returns labels as "key=value" strings.
func labelStrings(labels []profile.Label) []string {
	s := make([]string, len(labels))
	for i, l := range labels {
		s[i] = l.Key + "=" + l.Value
	}
	return s
}
