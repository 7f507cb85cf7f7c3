package kprofhttp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/kprof/kprof/agent"
	"github.com/kprof/kprof/profile"
)

// get returns the status, content type and body of a request.
func get(t *testing.T, method, url string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
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

// The handler, mounted on a mux at /debug/kprof/ or elsewhere under
// http.StripPrefix, serves the agent's answers; without an agent it
// says why there is no pprofile.
func TestHandler(t *testing.T) {
	if raceEnabled {
		// Outside kprof builds the counter has one state for all
		// goroutines (counter/state_plain.go): the handler's goroutines
		// suspending counting race on it there, and only there.
		t.Skip("the plain counter's single state is shared by the handler's goroutines")
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/kprof/", Handler())
	mux.Handle("/admin/kprof/", http.StripPrefix("/admin/kprof", Handler()))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.WriteTimeout = 5 * time.Second
	srv.Start()
	defer srv.Close()

	code, _, body := get(t, "GET", srv.URL+"/debug/kprof/snapshot")
	if want := "kprof: no live profile in this program: build it with kprof build and run it with KPROF_MODE=sample or exact (not off, nor a custom agent)\n"; code != 503 || string(body) != want {
		t.Errorf("without an agent: %d %q, want 503 %q", code, body, want)
	}

	a := agent.NewCCT(agent.Settings{Mode: profile.ModeExact})
	a.Register()
	fa, fb := &agent.Func{Name: "main.a", File: "a.go", Line: 3}, &agent.Func{Name: "main.b", File: "a.go", Line: 9}
	a.Sample([]*agent.Func{fa, fb}, 0, 20)
	meta := profile.Meta{Program: "svc", GoVersion: "go1.x", GOOS: "linux", GOARCH: "amd64", Labels: []profile.Label{{Key: "env", Value: "test"}}}
	agent.SetLive(agent.NewLive(a, func() profile.Meta { return meta }))
	defer agent.SetLive(nil)

	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
		check        func(body []byte) bool
	}{
		{"GET", "/debug/kprof/", 200, "text/html; charset=utf-8", func(b []byte) bool {
			return bytes.Contains(b, []byte(`<a href="snapshot?format=kprof">`)) && bytes.Contains(b, []byte("labels: env=test"))
		}},
		{"GET", "/debug/kprof/snapshot?format=kprof", 200, "application/octet-stream", func(b []byte) bool {
			p, err := profile.Parse(bytes.NewReader(b))
			return err == nil && p.TotalInstructions == 20 && len(p.Meta.Labels) == 1
		}},
		{"GET", "/debug/kprof/snapshot", 200, "application/octet-stream", func(b []byte) bool {
			p, err := pprofile.Parse(bytes.NewReader(b))
			return err == nil && p.CheckValid() == nil && len(p.Sample) == 1 && p.Sample[0].Value[1] == 20 &&
				p.Sample[0].Location[0].Line[0].Function.Name == "main.b" && strings.Contains(strings.Join(p.Comments, "\n"), "env=test")
		}},
		{"GET", "/admin/kprof/snapshot?format=kprof", 200, "application/octet-stream", func(b []byte) bool {
			p, err := profile.Parse(bytes.NewReader(b))
			return err == nil && p.TotalInstructions == 20
		}},
		{"GET", "/admin/kprof/", 200, "text/html; charset=utf-8", func(b []byte) bool { return bytes.Contains(b, []byte(`<a href="profile?seconds=30">`)) }},
		{"HEAD", "/debug/kprof/snapshot", 200, "application/octet-stream", func(b []byte) bool { return len(b) == 0 }},
		{"POST", "/debug/kprof/snapshot", 405, "text/plain; charset=utf-8", func(b []byte) bool { return string(b) == "only GET\n" }},
		{"GET", "/debug/kprof/profile?seconds=5", 400, "text/plain; charset=utf-8", func(b []byte) bool {
			return string(b) == "seconds=5: the profile would outlast the server's WriteTimeout (5s)\n"
		}},
		{"GET", "/debug/kprof/profile", 400, "text/plain; charset=utf-8", func(b []byte) bool {
			return string(b) == "seconds=30: the profile would outlast the server's WriteTimeout (5s)\n"
		}},
		{"GET", "/debug/kprof/profile?seconds=x", 400, "text/plain; charset=utf-8", func(b []byte) bool {
			return string(b) == "seconds=\"x\": want an integer from 1 to 3600\n"
		}},
		{"GET", "/debug/kprof/nothing", 404, "text/plain; charset=utf-8", func(b []byte) bool { return string(b) == "404 page not found\n" }},
	} {
		code, ctype, body := get(t, tc.method, srv.URL+tc.path)
		if code != tc.status || ctype != tc.ctype || !tc.check(body) {
			t.Errorf("%s %s: %d %s %q, want %d %s", tc.method, tc.path, code, ctype, body, tc.status, tc.ctype)
		}
	}

	// A window: what a goroutine counted in it.
	go func() {
		time.Sleep(300 * time.Millisecond)
		done := make(chan bool)
		go func() { // (Sample runs on the goroutine it profiles.)
			a.Register()
			a.Sample([]*agent.Func{fa}, 0, 7)
			close(done)
		}()
		<-done
	}()
	code, _, body = get(t, "GET", srv.URL+"/debug/kprof/profile?seconds=1")
	p, err := pprofile.Parse(bytes.NewReader(body))
	if code != 200 || err != nil || p.CheckValid() != nil || len(p.Sample) != 1 || p.Sample[0].Value[1] != 7 || p.DurationNanos < 1e9 {
		t.Errorf("profile?seconds=1: %d %v %v", code, err, p)
	}
}

// Linked into the programs that import it: the standard library and
// kprof's own linked-in packages only.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	got := strings.Fields(string(out))
	want := []string{"github.com/kprof/kprof/counter", "github.com/kprof/kprof/profile", "github.com/kprof/kprof/agent", "github.com/kprof/kprof/agent/kprofhttp"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("non-standard dependencies %v, want %v", got, want)
	}
}
