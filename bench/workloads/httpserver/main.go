// Command httpserver is the kprof evaluation workload for a network server:
// an HTTP server on the loopback interface with a goroutine per request,
// driven by a client that sends a bounded number of requests from a few
// goroutines. The client does not keep connections alive, so that every
// request is a new connection and the server serves it on a new goroutine
// (net/http runs one per connection): goroutines come and go all the run.
//
// Each request asks for one generated order (GET /order?id=N); the handler
// builds it, encodes it as JSON and checksums it in a header; the client
// decodes the body and checks both. Client goroutine w sends the requests
// w, w+clients, w+2·clients, …, so the checksum, which folds the answers
// in request order, does not depend on scheduling. (The server's work per
// request does, a little: reads from a socket return what has arrived.)
//
// Usage: httpserver [-n units]. Each unit of -n is 500 requests. The
// program prints one deterministic checksum line.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	perUnit = 500
	clients = 4
)

type item struct {
	SKU   string `json:"sku"`
	Qty   int64  `json:"qty"`
	Cents int64  `json:"cents"`
}

type order struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Items []item `json:"items"`
	Total int64  `json:"total"`
}

// makeOrder generates order id.
func makeOrder(id int64) order {
	x := uint64(id)*0x9e3779b97f4a7c15 + 7
	next := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	o := order{ID: id, Name: "customer-" + strconv.FormatUint(next()%10_000, 10)}
	for k := 1 + next()%8; k > 0; k-- {
		it := item{SKU: "sku-" + strconv.FormatUint(next()%100_000, 36), Qty: int64(1 + next()%5), Cents: int64(next() % 50_000)}
		o.Items = append(o.Items, it)
		o.Total += it.Qty * it.Cents
	}
	return o
}

func sum64(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func handle(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	body, err := json.Marshal(makeOrder(id))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Checksum", strconv.FormatUint(sum64(body), 16))
	w.Write(body)
}

// fetch gets order id and returns the hash of its answer.
func fetch(c *http.Client, base string, id int64) (uint64, error) {
	resp, err := c.Get(base + "/order?id=" + strconv.FormatInt(id, 10))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("order %d: %s", id, resp.Status)
	}
	if got := strconv.FormatUint(sum64(body), 16); got != resp.Header.Get("X-Checksum") {
		return 0, fmt.Errorf("order %d: checksum %s, header says %s", id, got, resp.Header.Get("X-Checksum"))
	}
	var o order
	if err := json.Unmarshal(body, &o); err != nil {
		return 0, err
	}
	if o.ID != id || o.Total != makeOrder(id).Total {
		return 0, fmt.Errorf("order %d: decoded id %d, total %d", id, o.ID, o.Total)
	}
	return sum64(body), nil
}

func main() {
	n := flag.Int("n", 10, "problem size: units of 500 requests")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "httpserver: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /order", handle)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()

	total := *n * perUnit
	hashes := make([]uint64, total)
	errs := make(chan error, clients)
	for w := 0; w < clients; w++ {
		go func() {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			for id := w; id < total; id += clients {
				h, err := fetch(c, base, int64(id))
				if err != nil {
					errs <- err
					return
				}
				hashes[id] = h
			}
			errs <- nil
		}()
	}
	for w := 0; w < clients; w++ {
		if err := <-errs; err != nil {
			fmt.Fprintln(os.Stderr, "httpserver:", err)
			os.Exit(1)
		}
	}
	srv.Close()
	sum := fnv.New64a()
	for _, h := range hashes {
		fmt.Fprintf(sum, "%x\n", h)
	}
	fmt.Printf("httpserver n=%d requests=%d checksum=%016x\n", *n, total, sum.Sum64())
}
