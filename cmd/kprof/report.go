package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/overlap"
)

const metricVersion = overlap.MetricVersion

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "show a profile (flat top list)",
		ArgsUsage: "PROFILE",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "nodecount", Value: 20, Usage: "show at most N functions"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{fmt.Errorf("report: want one profile file")}
			}
			p, err := overlap.ParseFile(c.Args().First())
			if err != nil {
				fmt.Fprintln(os.Stderr, "kprof:", err)
				return exitStatus(2)
			}
			return top(p, c.Int("nodecount"))
		},
	}
}

func top(p *overlap.Profile, n int) error {
	self := map[string]int64{}
	var walk func(nd *overlap.Node)
	walk = func(nd *overlap.Node) {
		if nd.Func.Name != "" {
			self[nd.Func.Name] += nd.Instructions
		}
		for _, c := range nd.Children {
			walk(c)
		}
	}
	walk(p.Root)
	names := make([]string, 0, len(self))
	for k := range self {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if self[names[i]] != self[names[j]] {
			return self[names[i]] > self[names[j]]
		}
		return names[i] < names[j]
	})
	fmt.Printf("%s: mode %s, granularity %d, %d instructions, %d samples\n", p.Meta.Program, p.Meta.Mode, p.Meta.Granularity, p.TotalInstructions, p.TotalSamples)
	for i, name := range names {
		if i == n {
			break
		}
		fmt.Printf("%14d %6.2f%%  %s\n", self[name], 100*float64(self[name])/float64(max(p.TotalInstructions, 1)), name)
	}
	return nil
}
