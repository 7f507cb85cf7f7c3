package reports

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoRewriteDependency keeps the reports apart from the transformation
// (STYLE.md, after cmd/cover): reports read profiles, whoever made them.
func TestNoRewriteDependency(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/kprof/kprof/rewrite" || strings.HasPrefix(pkg, "github.com/kprof/kprof/rewrite/") {
			t.Errorf("package reports depends on %s", pkg)
		}
	}
}
