package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// progress shows a message with elapsed seconds on a terminal while a long
// step runs, if it takes more than a moment.
type progress struct {
	once sync.Once
	stop chan struct{}
	wg   sync.WaitGroup
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newProgress(msg string) *progress {
	p := &progress{stop: make(chan struct{})}
	if !isTerminal(os.Stderr) {
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		start := time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		shown := false
		for {
			select {
			case <-p.stop:
				if shown {
					fmt.Fprintf(os.Stderr, "\r%s: done in %ds\n", msg, int(time.Since(start).Seconds()))
				}
				return
			case <-t.C:
				shown = true
				fmt.Fprintf(os.Stderr, "\r%s: %ds", msg, int(time.Since(start).Seconds()))
			}
		}
	}()
	return p
}

func (p *progress) done() {
	p.once.Do(func() { close(p.stop); p.wg.Wait() })
}
