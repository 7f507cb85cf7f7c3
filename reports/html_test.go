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

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/profile/profiletest"
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
	p := profiletest.Profile(profile.ModeExact, "main.main 1")
	p.Root.Child(profiletest.Func(evil)).Instructions = 5
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
	p := profiletest.Profile(profile.ModeSample, "main.main 10", "main.main;main.idle 0 0 3", "main.main;main.idle;main.deeper 0 0 1")
	var b bytes.Buffer
	if err := HTML(&b, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "main.idle") {
		t.Error("the page shows a context without instructions")
	}
}

// TestHTMLInChromium loads the page in headless Chromium and checks the DOM
// the script built: rectangles for the root and the top functions, and
// the zoomed view of a #n= fragment.
func TestHTMLInChromium(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no", chromium)
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	page := filepath.Join(t.TempDir(), "flame.html")
	var b bytes.Buffer
	if err := HTML(&b, demoProfile()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// demoProfile's nodes in preorder: 0 root, 1 main.main, 2 fmt.Println,
	// 3 fmt.Fprintln, 4 main.work, 5 main.leaf, 6 main.work, 7 runtime.main,
	// 8 main.init.
	tests := []struct {
		fragment   string
		want, not  []string // frames shown and not shown
		fullWidth  string   // a frame as wide as the root (index)
		partWidths []string // frames narrower than the root
	}{
		{"", []string{"root", "main.main", "fmt.Println", "main.work", "main.leaf"}, nil, "0", []string{"1", "4", "7"}},
		// Zoomed into main.work: its callers above it, full width, its
		// callees below, and nothing else.
		{"#n=4", []string{"root", "main.main", "main.work", "main.leaf"}, []string{"fmt.Println", "runtime.main"}, "4", []string{"5", "6"}},
	}
	for _, tt := range tests {
		t.Run("page"+tt.fragment, func(t *testing.T) {
			frames := chromiumFrames(t, chromium, "file://"+page+tt.fragment)
			shown := map[string]bool{}
			for _, f := range frames {
				shown[f.text] = true
			}
			for _, want := range tt.want {
				if !shown[want] {
					t.Errorf("the DOM has no frame %q; frames: %v", want, frames)
				}
			}
			for _, not := range tt.not {
				if shown[not] {
					t.Errorf("the DOM has a frame %q; frames: %v", not, frames)
				}
			}
			width := map[string]string{}
			for _, f := range frames {
				width[f.index] = f.width
			}
			if width["0"] == "" || width[tt.fullWidth] != width["0"] {
				t.Errorf("frame %s is %s wide, the root %s", tt.fullWidth, width[tt.fullWidth], width["0"])
			}
			for _, i := range tt.partWidths {
				if width[i] == "" || width[i] == width["0"] {
					t.Errorf("frame %s is %q wide, the root %s", i, width[i], width["0"])
				}
			}
		})
	}
}

type domFrame struct{ index, width, text string }

// chromiumFrames loads url in headless Chromium and returns the flame
// graph's frames in the DOM the page's script built.
func chromiumFrames(t *testing.T, chromium, url string) []domFrame {
	t.Helper()
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
		"--user-data-dir="+userData, "--window-size=1200,700", "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	frame := regexp.MustCompile(`<div class="frame[^"]*" data-i="(\d+)" style="[^"]*width: ([0-9.]+)px;[^"]*">([^<]*)</div>`)
	var frames []domFrame
	for _, m := range frame.FindAllStringSubmatch(string(dom), -1) {
		frames = append(frames, domFrame{m[1], m[2], m[3]})
	}
	if len(frames) == 0 {
		t.Fatalf("no frames in the DOM:\n%s", dom)
	}
	return frames
}
