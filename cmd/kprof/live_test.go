package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"
	"github.com/kprof/kprof/agent"
	"github.com/kprof/kprof/profile"
)

// freeAddr returns a loopback address with a port free at the time.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// get returns the body of a GET of url, failing on any status but 200.
func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, b)
	}
	return b
}

// TestLiveHTTP: a kprof-built HTTP server, with KPROF_HTTP, serves delta
// profiles that go tool pprof and the pprof package read, in which the
// request handler appears; two consecutive windows add up to the
// difference of the snapshots around them; the server answers its
// requests while snapshots are taken.
func TestLiveHTTP(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("builds net/http instrumented")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/liveserver")

	t.Run("bad address", func(t *testing.T) {
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		for _, tc := range []struct{ env, want string }{
			{"KPROF_HTTP=nonsense", `kprof: KPROF_HTTP="nonsense": want HOST:PORT`},
			{"KPROF_HTTP=" + busy.Addr().String(), `kprof: KPROF_HTTP="` + busy.Addr().String() + `": listen tcp ` + busy.Addr().String() + `: bind: address already in use`},
			{"KPROF_LABELS=env", `kprof: KPROF_LABELS="env": want k=v,…`},
			{"KPROF_INTERVAL=10ms", `kprof: KPROF_INTERVAL="10ms": want a duration of at least 1s`},
			{"KPROF_MODE=off\x00KPROF_HTTP=127.0.0.1:0", `kprof: KPROF_HTTP="127.0.0.1:0": KPROF_MODE=off has no profile to serve`},
		} {
			out, err := runCmd(t.TempDir(), strings.Split(tc.env, "\x00"), bin)
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Errorf("%s: %v, want exit status 2", tc.env, err)
			}
			if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, tc.want) {
				t.Errorf("%s: output %q, want one line starting %q", tc.env, out, tc.want)
			}
		}
	})

	t.Run("interval", func(t *testing.T) { testInterval(t, kprofBin, bin) })
	t.Run("handler", func(t *testing.T) { testHandler(t, bin) })

	kaddr, app := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, app)
	out := t.TempDir() + "/live.kprof"
	cmd.Env = append(os.Environ(), "KPROF_MODE=exact", "KPROF_HTTP="+kaddr, "KPROF_OUT="+out, "KPROF_LABELS=env=test,team=kprof")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server output:\n%s", log.String())
		}
	}()
	base := "http://" + kaddr + "/debug/kprof/"
	for i := 0; ; i++ {
		resp, err := http.Get(base)
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 100 {
			t.Fatalf("the kprof endpoint does not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if idx := string(get(t, base)); !strings.Contains(idx, "profile?seconds=30") || !strings.Contains(idx, "env=test") {
		t.Errorf("index page:\n%s", idx)
	}

	// load sends n requests, four at a time, and checks every answer.
	const perRequest = 500
	want := fmt.Sprintln(perRequest * (perRequest + 1) * (2*perRequest + 1) / 6)
	load := func(n int) {
		var wg sync.WaitGroup
		reqs := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for range reqs {
					resp, err := http.Get(fmt.Sprintf("http://%s/work?n=%d", app, perRequest))
					if err != nil {
						t.Error(err)
						continue
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if string(b) != want {
						t.Errorf("/work answered %q, want %q", b, want)
					}
				}
			})
		}
		for range n {
			reqs <- struct{}{}
		}
		close(reqs)
		wg.Wait()
	}
	load(10) // net/http's first-use work out of the way

	snapshot := func() *profile.Profile {
		p, err := profile.Parse(bytes.NewReader(get(t, base+"snapshot?format=kprof")))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// window fetches a delta of secs seconds, running n requests in it
	// (they take well under its length), and returns it parsed.
	window := func(secs, n int) *pprofile.Profile {
		var body []byte
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := http.Get(fmt.Sprintf("%sprofile?seconds=%d", base, secs))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, _ = io.ReadAll(resp.Body)
		}()
		time.Sleep(300 * time.Millisecond) // the window's first snapshot is taken
		start := time.Now()
		load(n)
		if d := time.Since(start); d > time.Duration(secs)*time.Second/2 {
			t.Logf("the load took %v of the %ds window", d, secs)
		}
		<-done
		p, err := pprofile.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("window: %v", err)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("window: %v", err)
		}
		return p
	}
	// in returns the instructions a pprof profile counts in fn (flat),
	// and whether fn is on any sample's stack.
	in := func(p *pprofile.Profile, fn string) (flat int64, seen bool) {
		for _, s := range p.Sample {
			for i, l := range s.Location {
				if l.Line[0].Function.Name == fn {
					seen = true
					if i == 0 {
						flat += s.Value[1]
					}
				}
			}
		}
		return flat, seen
	}

	a := snapshot()
	if got := labelString(a.Meta.Labels); !strings.HasPrefix(got, "env=test path=github.com/kprof/kprof/testdata/liveserver team=kprof version=") {
		t.Errorf("the snapshot's labels are %s, want env, path, team and version", got)
	}
	w1 := window(2, 40)
	w2 := window(1, 0)
	b := snapshot()
	if _, ok := in(w1, "main.handleWork"); !ok {
		t.Errorf("main.handleWork is not in the window's profile")
	}
	if !strings.Contains(strings.Join(w1.Comments, "\n"), "env=test") || len(w1.SampleType) != 2 || w1.SampleType[1].Type != "instructions" {
		t.Errorf("window: comments %q, sample types %v", w1.Comments, w1.SampleType)
	}
	// The work of the 40 requests is in the first window and nowhere
	// else: the windows add up to the snapshots' difference.
	f1, _ := in(w1, "main.squares")
	f2, _ := in(w2, "main.squares")
	var ab int64
	for _, s := range agent.Delta(a, b).Flat() {
		if s.Func.Name == "main.squares" {
			ab = s.Self
		}
	}
	if f1+f2 != ab || f2 != 0 || f1 == 0 || f1%40 != 0 {
		t.Errorf("main.squares: windows %d + %d, snapshots' difference %d; want equal, all in the first, 40 equal requests", f1, f2, ab)
	}

	// go tool pprof as the client, under load until it is done (the go
	// command may first build it).
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				load(8)
			}
		}
	}()
	top, err := runCmd("", []string{"PPROF_TMPDIR=" + t.TempDir()}, "go", "tool", "pprof", "-top", base+"profile?seconds=2")
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	if !strings.Contains(top, "main.handleWork") || !strings.Contains(top, "Type: instructions") {
		t.Errorf("go tool pprof -top does not list main.handleWork:\n%s", top)
	}
}

// testHandler: a kprof-built server that mounts kprofhttp.Handler on
// its own mux serves the live profiles there, without KPROF_HTTP: go tool
// pprof -top lists the request handler from a window taken under load,
// which the server keeps answering; the pprof package parses and
// validates the snapshot, with the labels in its comments; KPROF_MODE=off
// answers 503.
func testHandler(t *testing.T, bin string) {
	start := func(env ...string) (app string, stop func()) {
		app = freeAddr(t)
		cmd := exec.Command(bin, app, "mount")
		cmd.Env = append(append(os.Environ(), "KPROF_OUT="+t.TempDir()+"/h.kprof"), env...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			resp, err := http.Get("http://" + app + "/work?n=1")
			if err == nil {
				resp.Body.Close()
				break
			}
			if i == 100 {
				t.Fatalf("the server does not answer: %v\n%s", err, log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		return app, func() {
			cmd.Process.Kill()
			cmd.Wait()
			if t.Failed() {
				t.Logf("server output:\n%s", log.String())
			}
		}
	}

	app, stop := start("KPROF_MODE=exact", "KPROF_LABELS=env=mounted")
	defer stop()
	base := "http://" + app + "/debug/kprof/"
	q, err := pprofile.Parse(bytes.NewReader(get(t, base+"snapshot")))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if c := strings.Join(q.Comments, "\n"); !strings.Contains(c, "\nenv=mounted\n") || !strings.Contains(c, "path=github.com/kprof/kprof/testdata/liveserver") {
		t.Errorf("snapshot's comments:\n%s", c)
	}
	p, err := profile.Parse(bytes.NewReader(get(t, base+"snapshot?format=kprof")))
	if err != nil || !strings.HasPrefix(labelString(p.Meta.Labels), "env=mounted path=") {
		t.Errorf("snapshot?format=kprof: %v, labels %v", err, p)
	}
	if idx := string(get(t, base)); !strings.Contains(idx, `href="profile?seconds=30"`) {
		t.Errorf("index page:\n%s", idx)
	}

	// Requests, each checked, until go tool pprof is done.
	const n = 300
	want := fmt.Sprintln(n * (n + 1) * (2*n + 1) / 6)
	stopLoad, done := make(chan struct{}), make(chan int)
	go func() {
		served := 0
		defer func() { done <- served }()
		for {
			select {
			case <-stopLoad:
				return
			default:
			}
			resp, err := http.Get(fmt.Sprintf("http://%s/work?n=%d", app, n))
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != want {
				t.Errorf("/work answered %q, want %q", b, want)
				return
			}
			served++
		}
	}()
	top, err := runCmd("", []string{"PPROF_TMPDIR=" + t.TempDir()}, "go", "tool", "pprof", "-top", base+"profile?seconds=2")
	close(stopLoad)
	served := <-done
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	if !strings.Contains(top, "main.handleWork") || !strings.Contains(top, "Type: instructions") || served == 0 {
		t.Errorf("go tool pprof -top (%d requests served meanwhile):\n%s", served, top)
	}

	off, stopOff := start("KPROF_MODE=off")
	defer stopOff()
	resp, err := http.Get("http://" + off + "/debug/kprof/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.HasPrefix(string(b), "kprof: no live profile in this program") {
		t.Errorf("KPROF_MODE=off: %s %q, want 503", resp.Status, b)
	}
}

// labelString returns labels as "k=v k=v".
func labelString(labels []profile.Label) string {
	var s []string
	for _, l := range labels {
		s = append(s, l.Key+"="+l.Value)
	}
	return strings.Join(s, " ")
}

// testInterval: KPROF_INTERVAL writes one valid delta profile per
// interval and one at the end, numbered from 1, with the run's labels,
// which add up to the end-of-run profile: kprof merge writes it byte for
// byte, and kprof report of the files prints its report.
func testInterval(t *testing.T, kprofBin, bin string) {
	dir := t.TempDir()
	app := freeAddr(t)
	cmd := exec.Command(bin, app)
	cmd.Env = append(os.Environ(), "KPROF_MODE=exact", "KPROF_INTERVAL=1s", "KPROF_OUT="+dir+"/s.kprof", "KPROF_LABELS=env=test")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	work := func() {
		for i := 0; ; i++ {
			resp, err := http.Get("http://" + app + "/work?n=100")
			if err == nil {
				resp.Body.Close()
				return
			}
			if i == 100 {
				t.Fatalf("the server does not answer: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for time.Since(start) < 2500*time.Millisecond {
		work()
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	end, err := profile.ParseFile(dir + "/s.kprof")
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var parts []*profile.Profile
	var files []string
	for n := 1; ; n++ {
		file := fmt.Sprintf("s.%d.kprof", n)
		p, err := profile.ParseFile(filepath.Join(dir, file))
		if os.IsNotExist(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Meta, end.Meta) {
			t.Errorf("%s: meta %+v, end of run %+v", file, p.Meta, end.Meta)
		}
		parts = append(parts, p)
		files = append(files, file)
	}
	if !strings.HasPrefix(labelString(end.Meta.Labels), "env=test path=github.com/kprof/kprof/testdata/liveserver version=") {
		t.Errorf("end of run: labels %s", labelString(end.Meta.Labels))
	}
	// Two whole intervals at least (2.5 s at 1 s), and the last one.
	if len(parts) < 3 {
		t.Fatalf("%d interval profiles, want at least 3", len(parts))
	}
	t.Logf("%d interval profiles", len(parts))
	sum, err := profile.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	counts := func(p *profile.Profile) map[string][3]int64 {
		m := map[string][3]int64{}
		p.Walk(func(stack []profile.Func, n *profile.Node) {
			if n.Samples == 0 && n.Instructions == 0 && n.Calls == 0 {
				return
			}
			var k []string
			for _, f := range stack {
				k = append(k, f.Name)
			}
			m[strings.Join(k, ";")] = [3]int64{n.Samples, n.Instructions, n.Calls}
		})
		return m
	}
	got, want := counts(sum), counts(end)
	if len(got) != len(want) || sum.TotalInstructions != end.TotalInstructions || sum.TotalSamples != end.TotalSamples {
		t.Errorf("merged intervals: %d contexts, totals %d/%d; end of run: %d contexts, totals %d/%d",
			len(got), sum.TotalInstructions, sum.TotalSamples, len(want), end.TotalInstructions, end.TotalSamples)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: merged intervals %v, end of run %v", k, got[k], v)
		}
	}

	// The same through the CLI: kprof merge, kprof report of the files
	// and kprof compare.
	r := runKprof(t, kprofBin, dir, append([]string{"merge", "-o", "merged.kprof"}, files...)...)
	if r.status != 0 || r.stderr != "" {
		t.Fatalf("kprof merge: status %d\n%s", r.status, r.stderr)
	}
	mb, _ := os.ReadFile(filepath.Join(dir, "merged.kprof"))
	eb, _ := os.ReadFile(filepath.Join(dir, "s.kprof"))
	if !bytes.Equal(mb, eb) {
		t.Errorf("kprof merge of %v differs from the end-of-run profile", files)
	}
	all := runKprof(t, kprofBin, dir, append([]string{"report", "--nodecount", "0"}, files...)...)
	one := runKprof(t, kprofBin, dir, "report", "--nodecount", "0", "s.kprof")
	if all.status != 0 || all.stdout != one.stdout || !strings.Contains(one.stdout, "\nlabels: env=test path=") {
		t.Errorf("kprof report of the interval files:\n%s%s\nof the end-of-run profile:\n%s", all.stdout, all.stderr, one.stdout)
	}
	if c := runKprof(t, kprofBin, dir, "compare", "merged.kprof", "s.kprof"); c.status != 0 || !strings.HasPrefix(c.stdout, "overlap: 100.00%\n") {
		t.Errorf("kprof compare merged.kprof s.kprof: status %d\n%s%s", c.status, c.stdout, c.stderr)
	}
}
