// Package browsertest opens pages in headless Chromium for tests (the
// report's, cmd/starter TestReportBrowser, and the Temporal UI's,
// integration TestUIListShowsPoints), through chromedp.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium is Debian's Chromium, which `make chromium` installs.
const Chromium = "/usr/bin/chromium"

// Require skips t when Chromium is not installed, saying that what is
// not checked, unless FLSWEEP_INTEGRATION=1 asks for every test to run
// (and FLSWEEP_NO_BROWSER does not excuse the browser): then it fails t.
func Require(t testing.TB, what string) {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		if os.Getenv("FLSWEEP_INTEGRATION") == "1" && os.Getenv("FLSWEEP_NO_BROWSER") == "" {
			t.Fatalf("%s: %v; `make chromium` installs it (FLSWEEP_INTEGRATION=1 runs every test)", Chromium, err)
		}
		t.Skipf("%s is not installed (`make chromium` installs it): %s", Chromium, what)
	}
}

// Start starts headless Chromium with its profile in dir and a window of
// width × height, passing its events to listen when not nil, and returns
// the browser's context; the browser ends with t.
func Start(t testing.TB, dir string, width, height int, listen func(ev any)) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(Chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")), chromedp.WindowSize(width, height))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	var copts []chromedp.ContextOption
	if listen != nil {
		copts = append(copts, chromedp.WithListener(listen))
	}
	bctx, cancel := chromedp.NewContext(actx, copts...)
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx); err != nil { // starts the browser; no timeout on this first call
		t.Fatalf("start %s: %v", Chromium, err)
	}
	return bctx
}

// Screenshot takes a full-page screenshot of the page of ctx and writes it
// to the file that the environment variable env names, or else to path;
// it logs the file's path and returns the PNG.
func Screenshot(t testing.TB, ctx context.Context, env, path string) []byte {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if p := os.Getenv(env); p != "" {
		path = p
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return shot
}
