// Command db is the kprof evaluation workload in the role of SPEC JVM98
// _209_db: an in-memory table of records that is repeatedly sorted on
// different keys, searched with binary search, updated, and has records
// deleted and inserted.
//
// Usage: db [-n rounds]. The table holds 20000 records; each unit of -n is one
// round of sort / search / update / delete / insert operations. The program
// prints one deterministic checksum line.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const tableSize = 20000

// Record is one row of the table.
type Record struct {
	ID      uint64
	Last    string
	First   string
	City    string
	Zip     int32
	Balance int64 // cents
	Visits  int32
}

var (
	syllables = []string{"an", "ber", "cor", "dal", "el", "fen", "gar", "hol", "in", "jon",
		"kel", "lor", "mar", "nor", "os", "per", "quin", "ros", "sel", "tor", "ul", "van", "wes", "yor"}
	cities = []string{"Aberdeen", "Basel", "Cork", "Delft", "Essen", "Fribourg", "Genoa", "Haarlem",
		"Innsbruck", "Jena", "Kassel", "Lugano", "Malmo", "Nantes", "Oslo", "Porto"}
)

type table struct {
	r      *rand.Rand
	rows   []*Record
	nextID uint64
}

func name(r *rand.Rand) string {
	var sb strings.Builder
	for k := 2 + r.IntN(3); k > 0; k-- {
		sb.WriteString(syllables[r.IntN(len(syllables))])
	}
	s := sb.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func (t *table) newRecord() *Record {
	t.nextID++
	r := t.r
	return &Record{
		ID:      t.nextID * 0x9E3779B97F4A7C15, // unique (odd multiplier), not in insertion order
		Last:    name(r),
		First:   name(r),
		City:    cities[r.IntN(len(cities))],
		Zip:     int32(10000 + r.IntN(90000)),
		Balance: r.Int64N(10_000_000) - 2_000_000,
		Visits:  int32(r.IntN(500)),
	}
}

func byID(a, b *Record) int { return cmp.Compare(a.ID, b.ID) }

func byName(a, b *Record) int {
	if c := strings.Compare(a.Last, b.Last); c != 0 {
		return c
	}
	if c := strings.Compare(a.First, b.First); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func byCityBalance(a, b *Record) int {
	if c := strings.Compare(a.City, b.City); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Balance, a.Balance); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func byZip(a, b *Record) int {
	if c := cmp.Compare(a.Zip, b.Zip); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// shuffle permutes the rows with the table's own PRNG (Fisher-Yates).
func (t *table) shuffle() {
	for i := len(t.rows) - 1; i > 0; i-- {
		j := t.r.IntN(i + 1)
		t.rows[i], t.rows[j] = t.rows[j], t.rows[i]
	}
}

func main() {
	n := flag.Int("n", 75, "problem size: number of operation rounds over a 20000-record table")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "db: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()

	t := &table{r: rand.New(rand.NewPCG(1, 2))}
	for i := 0; i < tableSize; i++ {
		t.rows = append(t.rows, t.newRecord())
	}

	h := fnv.New64a()
	var found, missed, deleted, inserted uint64
	var buf []byte
	for round := 0; round < *n; round++ {
		r := t.r

		// 1. Sort by name and look up generated and existing names.
		t.shuffle()
		slices.SortFunc(t.rows, byName)
		for q := 0; q < 4000; q++ {
			var key Record
			if q%2 == 0 {
				p := t.rows[r.IntN(len(t.rows))]
				key = Record{Last: p.Last, First: p.First}
			} else {
				key = Record{Last: name(r), First: name(r)}
			}
			i, _ := slices.BinarySearchFunc(t.rows, &key, func(e, k *Record) int {
				if c := strings.Compare(e.Last, k.Last); c != 0 {
					return c
				}
				return strings.Compare(e.First, k.First)
			})
			if i < len(t.rows) && t.rows[i].Last == key.Last && t.rows[i].First == key.First {
				found++
				t.rows[i].Visits++
			} else {
				missed++
			}
		}

		// 2. Sort by city, then balance; apply interest to the top accounts of each city.
		slices.SortFunc(t.rows, byCityBalance)
		for i := 0; i < len(t.rows); {
			j := i
			for j < len(t.rows) && t.rows[j].City == t.rows[i].City {
				j++
			}
			for k := i; k < j && k < i+50; k++ {
				t.rows[k].Balance += t.rows[k].Balance / 100
			}
			i = j
		}

		// 3. Sort by ID; update random records found by binary search, delete some.
		slices.SortFunc(t.rows, byID)
		for q := 0; q < 3000; q++ {
			target := t.rows[r.IntN(len(t.rows))].ID
			if q%3 == 0 {
				target++ // usually absent
			}
			i, ok := slices.BinarySearchFunc(t.rows, target, func(e *Record, id uint64) int { return cmp.Compare(e.ID, id) })
			if !ok {
				missed++
				continue
			}
			found++
			rec := t.rows[i]
			rec.Balance -= int64(rec.Visits) * 7
			rec.City = cities[(int(rec.Zip)+q)%len(cities)]
			if rec.Balance < -1_900_000 {
				t.rows = slices.Delete(t.rows, i, i+1)
				deleted++
			}
		}
		for i := 0; i < 500 && len(t.rows) > tableSize/2; i++ {
			k := r.IntN(len(t.rows))
			t.rows = slices.Delete(t.rows, k, k+1)
			deleted++
		}

		// 4. Insert new records, keeping the ID order.
		for i := 0; i < 600; i++ {
			rec := t.newRecord()
			k, _ := slices.BinarySearchFunc(t.rows, rec, byID)
			t.rows = slices.Insert(t.rows, k, rec)
			inserted++
		}

		// 5. Sort by zip code and fold a report of this round into the checksum.
		slices.SortStableFunc(t.rows, byZip)
		for i := 0; i < len(t.rows); i += 97 {
			rec := t.rows[i]
			buf = buf[:0]
			buf = strconv.AppendUint(buf, rec.ID, 10)
			buf = append(buf, rec.Last...)
			buf = append(buf, rec.First...)
			buf = append(buf, rec.City...)
			buf = strconv.AppendInt(buf, int64(rec.Zip), 10)
			buf = strconv.AppendInt(buf, rec.Balance, 10)
			buf = strconv.AppendInt(buf, int64(rec.Visits), 10)
			h.Write(buf)
		}
	}

	slices.SortFunc(t.rows, byID)
	var total int64
	for _, rec := range t.rows {
		total += rec.Balance
	}
	fmt.Printf("db n=%d rows=%d found=%d missed=%d deleted=%d inserted=%d balance=%d checksum=%016x\n",
		*n, len(t.rows), found, missed, deleted, inserted, total, h.Sum64())
}
