package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/flsweep/flsweep/internal/browsertest"
	"github.com/flsweep/flsweep/report/reporttest"
)

// TestReportBrowser renders `starter report` of reporttest's fixture
// sweep, serves it on loopback and opens it in headless Chromium: the
// full-page screenshot is not blank, every image loaded, and there was no
// console error, exception or failed request. The screenshot goes to
// FLSWEEP_REPORT_SCREENSHOT, or to the test's temporary directory; its
// path is logged. The page's claims section shows the fixture claim that
// reads the sweep. Without Chromium (`make chromium` installs it) the test
// skips, unless FLSWEEP_INTEGRATION=1 asks for every test to run.
func TestReportBrowser(t *testing.T) {
	browsertest.Require(t, "the report is not opened in a browser")
	ctx := context.Background()
	dir := t.TempDir()
	blob := "file://" + filepath.ToSlash(filepath.Join(dir, "blob")) + "?create_dir=1&metadata=skip"
	if err := reporttest.Write(ctx, blob); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	claimsDir := writeClaimsFile(t, "fix", fixtureClaims)
	var stdout, stderr bytes.Buffer
	if err := execute(ctx, root(), []string{"report", reporttest.Name, "-o", out, "--blob", blob, "--claims", claimsDir}, &stdout, &stderr); err != nil {
		t.Fatalf("starter report: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "8 points (3 unfinished), 4 methods") {
		t.Errorf("starter report printed %q; want the points, unfinished points and methods counted", stdout.String())
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(out)))
	defer srv.Close()

	var mu sync.Mutex
	var problems []string
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, fmt.Sprintf("console %s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, fmt.Sprintf("exception: %s (line %d)", e.ExceptionDetails.Text, e.ExceptionDetails.LineNumber))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("browser log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventLoadingFailed:
			problems = append(problems, fmt.Sprintf("request failed: %s (%s)", e.ErrorText, e.RequestID))
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				problems = append(problems, fmt.Sprintf("%s: HTTP %d", e.Response.URL, e.Response.Status))
			}
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(e.Request.URL, srv.URL) && !strings.HasPrefix(e.Request.URL, "data:") {
				problems = append(problems, "request outside the report: "+e.Request.URL)
			}
		}
	}
	bctx := browsertest.Start(t, dir, 1280, 900, listen)
	tctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL+"/index.html"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("open the report: %v", err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("wait for the images: %v", err)
	}
	type loaded struct{ N, Loaded int }
	imgs, err := chromedp.Run(tctx, chromedp.Evaluate[loaded](`({N: document.images.length, Loaded: Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length})`))
	if err != nil {
		t.Fatalf("count the images: %v", err)
	}
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatalf("read the page's text: %v", err)
	}
	// The claims section: the fixture's claim that reads this sweep, not
	// the one that reads another.
	for _, want := range []string{"7. The papers' claims", "FedProx ends below FedAvg. fedprox-below", "-0.125 [-0.125, -0.125], n = 2", "reproduced"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
	if strings.Contains(text, "elsewhere") {
		t.Error("the page lists claim elsewhere, which reads another sweep")
	}
	shot := browsertest.Screenshot(t, tctx, "FLSWEEP_REPORT_SCREENSHOT", filepath.Join(dir, "report.png"))
	if imgs.N != 10 || imgs.Loaded != imgs.N {
		t.Errorf("%d of %d images loaded; want all 10 figures", imgs.Loaded, imgs.N)
	}
	mu.Lock()
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if share := inked(img); share < 0.05 {
		t.Errorf("screenshot %v: %.1f%% non-white pixels; want a drawn page (at least 5%%)", img.Bounds(), 100*share)
	}
}

// inked is the share of pixels of img that are not (near) white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}
