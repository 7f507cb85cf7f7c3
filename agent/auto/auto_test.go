package auto

import (
	"fmt"
	"testing"

	"github.com/kprof/kprof/profile"
)

// liveSettings: KPROF_LABELS' labels, trimmed, replace the build's of the
// same key and come sorted by key; a malformed list is one error.
func TestLabelSettings(t *testing.T) {
	build := []profile.Label{{Key: "path", Value: "example.com/svc"}, {Key: "version", Value: "v1.0.0"}}
	for _, tc := range []struct {
		labels, want, err string
	}{
		{"", "[{path example.com/svc} {version v1.0.0}]", ""},
		{"env=prod", "[{env prod} {path example.com/svc} {version v1.0.0}]", ""},
		{" zone = eu-1 , env=prod,version=v2", "[{env prod} {path example.com/svc} {version v2} {zone eu-1}]", ""},
		{"empty=,eq=a=b", "[{empty } {eq a=b} {path example.com/svc} {version v1.0.0}]", ""},
		{"env", "", `KPROF_LABELS="env": want k=v,… with a key before each = ("env")`},
		{"=x", "", `KPROF_LABELS="=x": want k=v,… with a key before each = ("=x")`},
		{"a=1,", "", `KPROF_LABELS="a=1,": want k=v,… with a key before each = ("")`},
		{"a=1,a=2", "", `KPROF_LABELS="a=1,a=2": key "a" twice`},
	} {
		env := map[string]string{"KPROF_LABELS": tc.labels, "KPROF_HTTP": "127.0.0.1:1"}
		addr, got, err := liveSettings(func(k string) string { return env[k] }, build)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %s", tc.labels, err, tc.err)
			}
			continue
		}
		if err != nil || addr != "127.0.0.1:1" || fmt.Sprint(got) != tc.want {
			t.Errorf("%q: %q %v %v, want %s", tc.labels, addr, got, err, tc.want)
		}
		p := profile.Profile{Meta: profile.Meta{Labels: got}, Root: &profile.Node{}}
		if err := p.CheckValid(); err != nil {
			t.Errorf("%q: %v", tc.labels, err)
		}
	}
}

// buildLabels: the test binary's own build information, without the
// fields Meta has.
func TestBuildLabels(t *testing.T) {
	ls := buildLabels()
	if len(ls) == 0 || ls[0].Key != "path" || ls[0].Value == "" {
		t.Fatalf("buildLabels() = %v, want path first", ls)
	}
	for i, l := range ls {
		if i > 0 && ls[i-1].Key >= l.Key {
			t.Errorf("labels %v not sorted", ls)
		}
		switch l.Key {
		case "path", "version", "vcs.revision":
		default:
			t.Errorf("label %v: want path, version or vcs.revision", l)
		}
	}
}
