package rewrite

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kprof/kprof/cost"
)

func testTable(t *testing.T) *cost.Table {
	t.Helper()
	data, err := os.ReadFile("testdata/test.costtable")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cost.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// goldenInputs are the inputs of TestGolden.
func goldenInputs(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/*.go")
	for _, prog := range []string{"branches", "clears", "fig4", "lazy", "results", "switches"} {
		files = append(files, filepath.Join("..", "testdata", "progs", prog, "main.go"))
	}
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	return files
}

// number matches the numbers that differ between metrics: amounts, and
// the width of a switch's table of charges (valueDispatch.elem).
var number = regexp.MustCompile(`\b[0-9]+\b|uint(8|16|32)\b`)

// TestCostShape checks that the cost metric changes the amounts charged
// and nothing else: every golden input's rewritten source under the test
// table is the instruction metric's with other numbers, and the checks,
// small leaves and pushes (decided on instruction counts) are the same.
func TestCostShape(t *testing.T) {
	tbl := testTable(t)
	for _, file := range goldenInputs(t) {
		t.Run(file, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, plain := instrument(t, filepath.Base(file), src)
			opts := DefaultOptions
			opts.Cost = tbl
			_, weighted := instrumentWith(t, filepath.Base(file), src, opts)
			a := number.ReplaceAllString(string(plain.Files[0]), "N")
			b := number.ReplaceAllString(string(weighted.Files[0]), "N")
			if a != b {
				t.Errorf("the cost metric changes the shape of the rewritten source\n--- instructions ---\n%s\n--- cost ---\n%s", a, b)
			}
			if string(plain.Files[0]) == string(weighted.Files[0]) {
				t.Errorf("the cost metric charges the same amounts as the instruction metric")
			}
			for i, p := range plain.Plans {
				q := weighted.Plans[i]
				if p.Leaf != q.Leaf || p.Local != q.Local || p.Lazy != q.Lazy || p.LateEntry != q.LateEntry || len(p.Checks) != len(q.Checks) || len(p.ExitEntry) != len(q.ExitEntry) {
					t.Errorf("%s: plans differ: leaf %v/%v local %v/%v lazy %v/%v late %v/%v checks %d/%d exit entries %d/%d",
						p.Name, p.Leaf, q.Leaf, p.Local, q.Local, p.Lazy, q.Lazy, p.LateEntry, q.LateEntry, len(p.Checks), len(q.Checks), len(p.ExitEntry), len(q.ExitEntry))
				}
				var sum int64
				for _, b := range q.Fn.Blocks {
					if w := WeightBy(b, tbl); w != q.Weights[b.Index] {
						t.Errorf("%s block %d: weight %d, want %d", q.Name, b.Index, q.Weights[b.Index], w)
					}
					sum += q.Weights[b.Index]
					if (q.Weights[b.Index] == 0) != (p.Weights[b.Index] == 0) {
						t.Errorf("%s block %d weighs %d instructions and %d ps", q.Name, b.Index, p.Weights[b.Index], q.Weights[b.Index])
					}
				}
				if sum != q.Total {
					t.Errorf("%s: total %d, blocks weigh %d", q.Name, q.Total, sum)
				}
			}
		})
	}
}

// TestGoldenCost compares the cost-weighted instrumentation of Figure 4
// and of the branches program with their golden files (weights of the
// test table).
func TestGoldenCost(t *testing.T) {
	tbl := testTable(t)
	for _, prog := range []string{"fig4", "branches"} {
		file := filepath.Join("..", "testdata", "progs", prog, "main.go")
		golden := filepath.Join("testdata", prog+".cost.golden")
		t.Run(prog, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			opts := DefaultOptions
			opts.Cost = tbl
			_, out := instrumentWith(t, filepath.Base(file), src, opts)
			checkGolden(t, file, golden, rendered(out), "TestGoldenCost")
		})
	}
}
