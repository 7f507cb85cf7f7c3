package reports

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kprof/kprof/overlap"
)

func TestHTML(t *testing.T) {
	var a, b bytes.Buffer
	if err := HTML(&a, demoProfile()); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&b, demoProfile()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renderings of the same profile differ")
	}
	page := a.String()
	for _, want := range []string{
		"<title>kprof: demo</title>",
		`"root"`,              // the root's label, in the script
		`"main.work"`,         // the top function
		`"main.main"`,         // and its caller
		`/src/main/main.go:9`, // file:line for the hover
		"mode exact · 1000 instructions",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Self-contained: nothing is loaded from elsewhere.
	for _, bad := range []string{"http://", "https://", "<link", "src="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

func TestHTMLEscapes(t *testing.T) {
	evil := `main.</script><script>alert("x")</script>&amp;`
	p := buildProfile(overlap.ModeExact, "main.main 1")
	p.Root.Child(testFunc(evil)).Instructions = 5
	p.Meta.Program = `<b>prog</b>`
	p.TotalInstructions = 6
	var b bytes.Buffer
	if err := HTML(&b, p); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>alert", "</script><script>", "<b>prog</b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	if !strings.Contains(page, "&lt;b&gt;prog&lt;/b&gt;") {
		t.Error("the program's name is not escaped as text")
	}
}

// The flame graph leaves out contexts without instructions: they would be
// rectangles of no width.
func TestHTMLDropsEmpty(t *testing.T) {
	p := buildProfile(overlap.ModeSample, "main.main 10", "main.main;main.idle 0 0 3", "main.main;main.idle;main.deeper 0 0 1")
	var b bytes.Buffer
	if err := HTML(&b, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "main.idle") {
		t.Error("the page shows a context without instructions")
	}
}

// TestHTMLInChromium loads the page in headless Chromium and checks the DOM
// the script built: rectangles for the root and the top functions.
func TestHTMLInChromium(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no", chromium)
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "flame.html")
	var b bytes.Buffer
	if err := HTML(&b, demoProfile()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Chromium's helper processes may still write to its profile directory
	// when the test's own temporary directory is removed: use another one.
	userData, err := os.MkdirTemp("", "kprof-chromium")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(userData)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+userData, "--window-size=1200,700", "--dump-dom", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	frame := regexp.MustCompile(`<div class="frame[^"]*" data-i="\d+" style="[^"]*">([^<]*)</div>`)
	shown := map[string]bool{}
	for _, m := range frame.FindAllStringSubmatch(string(dom), -1) {
		shown[m[1]] = true
	}
	for _, want := range []string{"root", "main.main", "main.work", "main.leaf"} {
		if !shown[want] {
			t.Errorf("the DOM has no frame %q; frames: %v\n%s", want, shown, dom)
		}
	}
}
