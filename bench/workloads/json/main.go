// Command json is the kprof evaluation workload for encoding/json (a role
// SPEC JVM98 does not have but every Go service does): generated orders
// (nested structs, slices, pointers, a map, floats, time-free strings) are
// marshalled, unmarshalled, re-marshalled and compared, and the document is
// also walked token by token with json.Decoder.
//
// Usage: json [-n batches]. Each unit of -n is one batch of 400 orders. The
// program prints one deterministic checksum line.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const ordersPerBatch = 400

// Address is a postal address.
type Address struct {
	Street  string `json:"street"`
	City    string `json:"city"`
	Country string `json:"country"`
	Zip     string `json:"zip,omitempty"`
}

// Customer places orders.
type Customer struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Email    string   `json:"email"`
	VIP      bool     `json:"vip"`
	Shipping Address  `json:"shipping"`
	Billing  *Address `json:"billing,omitempty"`
}

// Item is an order line.
type Item struct {
	SKU      string   `json:"sku"`
	Title    string   `json:"title"`
	Quantity int32    `json:"qty"`
	Price    float64  `json:"price"`
	Discount *float64 `json:"discount,omitempty"`
	Tags     []string `json:"tags"`
}

// Order is the document unit.
type Order struct {
	ID       uint64            `json:"id"`
	Customer Customer          `json:"customer"`
	Items    []Item            `json:"items"`
	Total    float64           `json:"total"`
	Paid     bool              `json:"paid"`
	Note     string            `json:"note,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Scores   []int64           `json:"scores"`
}

// Batch is one marshalled document.
type Batch struct {
	Seq    int     `json:"seq"`
	Source string  `json:"source"`
	Orders []Order `json:"orders"`
}

var (
	words    = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"}
	cities   = []string{"Zürich", "Genève", "København", "Kraków", "São Paulo", "Reykjavík", "Łódź", "Málaga"}
	specials = []string{"", "quote \"x\"", "back\\slash", "tab\tsep", "<html> & co", "line\nbreak", "emoji \u263a", "\u00e9t\u00e9"}
)

func phrase(r *rand.Rand, k int) string {
	var b []byte
	for i := 0; i < k; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[r.IntN(len(words))]...)
	}
	return string(b)
}

func address(r *rand.Rand) Address {
	a := Address{
		Street:  fmt.Sprintf("%d %s street", 1+r.IntN(999), phrase(r, 1)),
		City:    cities[r.IntN(len(cities))],
		Country: []string{"CH", "DK", "PL", "BR", "IS", "ES"}[r.IntN(6)],
	}
	if r.IntN(3) > 0 {
		a.Zip = fmt.Sprintf("%05d", r.IntN(100000))
	}
	return a
}

// cents returns a float64 with two decimals; it survives a JSON round trip exactly.
func cents(r *rand.Rand, max int) float64 { return float64(r.IntN(max)) / 100 }

func genOrder(r *rand.Rand, id uint64) Order {
	o := Order{
		ID: id,
		Customer: Customer{
			ID:       int64(r.Uint64() >> 12),
			Name:     phrase(r, 2),
			Email:    phrase(r, 1) + "@example.org",
			VIP:      r.IntN(10) == 0,
			Shipping: address(r),
		},
		Paid: r.IntN(4) != 0,
	}
	if r.IntN(2) == 0 {
		b := address(r)
		o.Customer.Billing = &b
	}
	for k := 1 + r.IntN(8); k > 0; k-- {
		it := Item{
			SKU:      fmt.Sprintf("SKU-%06d", r.IntN(1000000)),
			Title:    phrase(r, 1+r.IntN(4)),
			Quantity: int32(1 + r.IntN(20)),
			Price:    cents(r, 100000),
		}
		if r.IntN(4) == 0 {
			d := cents(r, 5000)
			it.Discount = &d
		}
		for t := r.IntN(4); t > 0; t-- {
			it.Tags = append(it.Tags, words[r.IntN(len(words))])
		}
		o.Items = append(o.Items, it)
		o.Total += float64(it.Price * float64(it.Quantity))
	}
	if r.IntN(3) == 0 {
		o.Note = specials[r.IntN(len(specials))] + " " + phrase(r, 3)
	}
	if r.IntN(2) == 0 {
		o.Attrs = map[string]string{}
		for k := 1 + r.IntN(5); k > 0; k-- {
			o.Attrs[words[r.IntN(len(words))]] = phrase(r, 2)
		}
	}
	for k := r.IntN(10); k > 0; k-- {
		o.Scores = append(o.Scores, int64(r.Uint64())>>int(r.IntN(60)))
	}
	return o
}

func main() {
	n := flag.Int("n", 50, "problem size: number of batches of 400 orders")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "json: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	r := rand.New(rand.NewPCG(1, 2))
	sum := fnv.New64a()
	var bytesOut, tokens uint64
	var id uint64
	for seq := 0; seq < *n; seq++ {
		b := Batch{Seq: seq, Source: "kprof/json"}
		for i := 0; i < ordersPerBatch; i++ {
			id++
			b.Orders = append(b.Orders, genOrder(r, id))
		}
		var doc []byte
		var err error
		if seq%3 == 2 {
			doc, err = json.MarshalIndent(&b, "", "  ")
		} else {
			doc, err = json.Marshal(&b)
		}
		must(err)
		bytesOut += uint64(len(doc))
		sum.Write(doc)

		var back Batch
		must(json.Unmarshal(doc, &back))
		again, err := json.Marshal(&back)
		must(err)
		first := doc
		if seq%3 == 2 {
			var compact bytes.Buffer
			must(json.Compact(&compact, doc))
			first = compact.Bytes()
		}
		if !bytes.Equal(first, again) {
			fail("batch %d: round trip changed the document", seq)
		}

		// Stream the document as tokens.
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			must(err)
			tokens++
			switch v := tok.(type) {
			case json.Number:
				sum.Write([]byte(v))
			case bool:
				if v {
					sum.Write([]byte{1})
				}
			}
		}

		// Decode into a generic value too (maps are only looked up, never ranged).
		var generic map[string]any
		must(json.Unmarshal(again, &generic))
		orders, _ := generic["orders"].([]any)
		if len(orders) != ordersPerBatch {
			fail("batch %d: generic decode found %d orders", seq, len(orders))
		}
		last := orders[len(orders)-1].(map[string]any)
		sum.Write([]byte(fmt.Sprint(last["id"], last["total"])))
	}
	fmt.Printf("json n=%d bytes=%d tokens=%d checksum=%016x\n", *n, bytesOut, tokens, sum.Sum64())
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "json: "+format+"\n", args...)
	os.Exit(1)
}
