package auto

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kprof/kprof/agent"
	"github.com/kprof/kprof/profile"
)

// intervalSetting reads KPROF_INTERVAL: a Go duration of at least a
// second, or unset (0).
func intervalSetting(getenv func(string) string) (time.Duration, error) {
	v := getenv("KPROF_INTERVAL")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("KPROF_INTERVAL=%q: want a duration of at least 1s (60s, 5m)", v)
	}
	return d, nil
}

// periodic writes delta profiles, one per interval (KPROF_INTERVAL) or
// per N instructions (KPROF_EVERY): what the program counted since the
// previous one, to <out stem>.<n>.kprof (n from 1), each file written
// atomically (overlap's WriteFile). The last one, at the end of the run,
// holds what was counted since the previous one, so that the files add
// up to the run's profile.
type periodic struct {
	a    *agent.CCT
	stem string
	mu   sync.Mutex
	prev *profile.Profile
	n    int
	done bool // stop: no more files but the last
	// final: the last file is written.
	final bool
	// KPROF_EVERY: the multiple of N the last file was written at.
	boundary int64
}

func newPeriodic(a *agent.CCT, out string) *periodic {
	return &periodic{a: a, stem: strings.TrimSuffix(out, ".kprof"), prev: &profile.Profile{Root: &profile.Node{}}}
}

// startPeriodic starts writing one delta profile per interval.
func startPeriodic(a *agent.CCT, out string, every time.Duration) *periodic {
	p := newPeriodic(a, out)
	// Not counted: the program's profile is the same with or without it.
	agent.GoSuspended(func() {
		for next := time.Now().Add(every); ; next = next.Add(every) {
			time.Sleep(time.Until(next))
			p.mu.Lock()
			if p.done {
				p.mu.Unlock()
				return
			}
			p.write(a.Snapshot(meta()))
			p.mu.Unlock()
		}
	})
	return p
}

// write writes the delta of cur since the previous profile. The caller
// holds p.mu.
func (p *periodic) write(cur *profile.Profile) {
	p.n++
	path := fmt.Sprintf("%s.%d.kprof", p.stem, p.n)
	if err := agent.Delta(p.prev, cur).WriteFile(path); err != nil {
		fmt.Fprintln(os.Stderr, "kprof: writing interval profile:", err)
	}
	p.prev = cur
}

// stop ends the files written during the run, before the run's profile
// is read: one being written is finished first, and none is written after
// (a later one would hold counts beyond the run's profile, and the last
// file's delta would be negative there).
func (p *periodic) stop() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// last writes the delta of the run's profile, read after stop, once.
func (p *periodic) last(final *profile.Profile) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.final {
		p.final = true
		p.write(final)
	}
}
