package toolexec

import (
	"strings"
	"testing"
)

// TestLinkHint checks which link failures get kprof's hint and that it
// names the package and the importer from the linker's message.
func TestLinkHint(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		want         []string // substrings of the hint; nil: no hint
	}{
		{"counter", "link: fingerprint mismatch: github.com/kprof/kprof/counter has 1a2b, import from example.com/app/x expecting 3c4d\n",
			[]string{"github.com/kprof/kprof/counter (example.com/app/x expects", "kprof clean"}},
		{"agent, no importer", "link: fingerprint mismatch: github.com/kprof/kprof/agent has 1a2b\n",
			[]string{"builds of github.com/kprof/kprof/agent. "}},
		{"user package", "link: fingerprint mismatch: example.com/lib has 1a2b, import from example.com/app expecting 3c4d\n", nil},
		{"module prefix only", "link: fingerprint mismatch: github.com/kprof/kprofx has 1a2b\n", nil},
		{"other failure", "main.main: relocation target main.f not defined\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := linkHint([]byte(tc.stderr))
			if tc.want == nil {
				if got != "" {
					t.Fatalf("hint %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("hint %q lacks %q", got, w)
				}
			}
		})
	}
}
