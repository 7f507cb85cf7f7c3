// A program importing net/http, for measuring a cold kprof build:
//
//	GOCACHE=$(mktemp -d) XDG_CACHE_HOME=$(mktemp -d) bash -c "time kprof build -o /tmp/h ./testdata/nethttp"
package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
)

func main() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/kprof")
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(string(b))
}
