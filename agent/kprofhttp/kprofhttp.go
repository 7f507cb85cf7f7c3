// Package kprofhttp serves kprof's live profiles from a program's own HTTP
// server: the endpoints KPROF_HTTP serves on an address of its own
// (/debug/kprof/profile?seconds=N, /debug/kprof/snapshot,
// /debug/kprof/snapshot?format=kprof and the index /debug/kprof/), as an
// http.Handler to mount on the program's mux, like net/http/pprof's:
//
//	mux.Handle("/debug/kprof/", kprofhttp.Handler())
//
// Mounted elsewhere, under http.StripPrefix, it serves the same paths
// relative to the mount point (profile, snapshot):
//
//	mux.Handle("/admin/kprof/", http.StripPrefix("/admin/kprof", kprofhttp.Handler()))
//
// The handler answers with the agent's answers (agent.Live's Respond),
// with counting suspended while it prepares and writes them: the
// program's profile counts net/http's reading of the request, as for any
// other request, not the profile's encoding. In a program kprof did not
// build, or run with KPROF_MODE=off or a custom agent, there is no
// profile: every request is answered 503 Service Unavailable with a line
// that says why.
//
// The package is separate from package agent, which every program kprof
// builds links, so that only programs that import it link net/http for
// it. It depends on the standard library and package agent only.
package kprofhttp

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kprof/kprof/agent"
)

// Handler returns the handler of kprof's live profiles: GET (or HEAD) of
// /debug/kprof/ and the endpoints below it, or of the same paths relative
// to where it is mounted (a path that does not start with /debug/kprof is
// taken as one below it).
func Handler() http.Handler { return handler{} }

type handler struct{}

func (handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	agent.Suspend(func() { serve(w, r) })
}

func serve(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, ctype string, body []byte) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	}
	text := func(status int, format string, args ...any) {
		reply(status, "text/plain; charset=utf-8", fmt.Appendf(nil, format+"\n", args...))
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		text(http.StatusMethodNotAllowed, "only GET")
		return
	}
	l := agent.Running()
	if l == nil {
		text(http.StatusServiceUnavailable, "kprof: no live profile in this program: build it with kprof build and run it with KPROF_MODE=sample or exact (not off, nor a custom agent)")
		return
	}
	path := r.URL.Path
	if path != "/debug/kprof" && !strings.HasPrefix(path, "/debug/kprof/") {
		path = "/debug/kprof/" + strings.TrimPrefix(path, "/")
	}
	if path == "/debug/kprof/profile" {
		// As net/http/pprof does: a window the server's write timeout
		// would cut is refused before it starts.
		secs := r.URL.Query().Get("seconds")
		if secs == "" {
			secs = "30" // Respond's default
		}
		if s, err := strconv.ParseInt(secs, 10, 64); err == nil {
			srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
			if ok && srv.WriteTimeout > 0 && time.Duration(s)*time.Second >= srv.WriteTimeout {
				text(http.StatusBadRequest, "seconds=%d: the profile would outlast the server's WriteTimeout (%v)", s, srv.WriteTimeout)
				return
			}
		}
	}
	status, ctype, body := l.Respond(path, r.URL.RawQuery)
	if ctype == "application/octet-stream" && status == http.StatusOK {
		w.Header().Set("Content-Disposition", `attachment; filename="`+download(path, r.URL.Query().Get("format"))+`"`)
	}
	reply(status, ctype, body)
}

// download names the file a browser saves a profile as.
func download(path, format string) string {
	name := strings.TrimPrefix(path, "/debug/kprof/")
	if format == "kprof" {
		return name + ".kprof"
	}
	return name + ".pb.gz"
}
