// Package browsertest runs a real headless Chromium for the project's
// browser tests, driven over the DevTools protocol with chromedp.
//
// Chromium is Debian's /usr/bin/chromium (or the program named by
// PAYKIT_CHROMIUM). When it is missing a browser test fails, unless
// PAYKIT_SKIP_BROWSER=1 says to skip it. Screenshots go to
// $PAYKIT_ARTIFACTS, by default testdata/artifacts at the module root.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Environment variables of the harness.
const (
	// SkipEnv set to 1 skips browser tests when Chromium is missing
	// (without it they fail).
	SkipEnv = "PAYKIT_SKIP_BROWSER"
	// ChromiumEnv names the Chromium program; default /usr/bin/chromium,
	// else chromium or chromium-browser on PATH.
	ChromiumEnv = "PAYKIT_CHROMIUM"
	// ArtifactsEnv is the directory screenshots are written to.
	ArtifactsEnv = "PAYKIT_ARTIFACTS"
)

// Viewport is the browser's window: a common phone size, because the payer
// pages are mobile first.
const (
	ViewportWidth  = 390
	ViewportHeight = 844
)

// StepTimeout bounds every browser step (a navigation, a click, a wait).
const StepTimeout = 20 * time.Second

// Browser is one headless Chromium with one tab, for one test. It is
// closed when the test ends.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu       sync.Mutex
	problems []string // CSP violations and uncaught script errors
}

// ChromiumPath returns the Chromium program to run, or "" when there is
// none.
func ChromiumPath() string {
	if p := os.Getenv(ChromiumEnv); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts Chromium with a fresh profile for t.
func New(t testing.TB) *Browser {
	t.Helper()
	path := ChromiumPath()
	if path == "" {
		if os.Getenv(SkipEnv) == "1" {
			t.Skip("no Chromium and " + SkipEnv + "=1: browser test skipped")
		}
		t.Fatal("no Chromium at /usr/bin/chromium (apt-get install chromium, or set " + ChromiumEnv +
			"); set " + SkipEnv + "=1 to skip browser tests")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(ViewportWidth, ViewportHeight),
		// The machine has no network but loopback: no calls home.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &Browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	start := time.Now()
	if err := chromedp.Do(ctx); err != nil { // starts the browser, no timeout (see chromedp.Run)
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	b.watch()
	b.Do(chromedp.EmulateViewport(ViewportWidth, ViewportHeight))
	t.Logf("Chromium started in %v", time.Since(start).Round(time.Millisecond))
	return b
}

// watch records the page problems a test must not have: Content Security
// Policy violations (the Log domain's security entries) and uncaught
// script errors.
func (b *Browser) watch() {
	logs := chromedp.Events(b.ctx, cdplog.EntryAdded)
	exceptions := chromedp.Events(b.ctx, runtime.ExceptionThrown)
	if _, err := chromedp.Call(b.ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		b.t.Fatalf("enable the Log domain: %v", err)
	}
	if _, err := chromedp.Call(b.ctx, runtime.Enable, cdp.Empty{}); err != nil {
		b.t.Fatalf("enable the Runtime domain: %v", err)
	}
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			if e := ev.Entry; e != nil && (e.Source == cdplog.EntrySourceSecurity ||
				(e.Source == cdplog.EntrySourceJavascript && e.Level == cdplog.EntryLevelError)) {
				b.problem(fmt.Sprintf("%s %s: %s (%s)", e.Source, e.Level, e.Text, e.URL))
			}
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			if d := ev.ExceptionDetails; d != nil {
				text := d.Text
				if d.Exception != nil && d.Exception.Description != "" {
					text += " " + d.Exception.Description
				}
				b.problem("uncaught exception: " + text)
			}
		}
	}()
}

func (b *Browser) problem(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, s)
}

// Problems returns the CSP violations and uncaught script errors seen so
// far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// CheckNoProblems fails the test if a page had a CSP violation or an
// uncaught script error.
func (b *Browser) CheckNoProblems() {
	b.t.Helper()
	for _, p := range b.Problems() {
		b.t.Errorf("browser: %s", p)
	}
}

// Context returns the tab's context for chromedp calls of a test's own;
// it has no deadline.
func (b *Browser) Context() context.Context { return b.ctx }

// step runs fn with StepTimeout.
func (b *Browser) step(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(b.ctx, StepTimeout)
	defer cancel()
	return fn(ctx)
}

// Do runs actions in order; any error fails the test, with where the
// browser is.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.step(func(ctx context.Context) error { return chromedp.Do(ctx, actions...) }); err != nil {
		b.fatal("%v", err)
	}
}

// Navigate loads url and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Do(chromedp.Navigate(url))
}

// Click clicks the element that the CSS selector finds first and waits
// for a page load it starts, if any, by waiting for ready below.
func (b *Browser) Click(css string) {
	b.t.Helper()
	b.Do(chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible))
}

// ClickAndLoad clicks the element and waits until the page it leads to
// has loaded.
func (b *Browser) ClickAndLoad(css string) {
	b.t.Helper()
	err := b.step(func(ctx context.Context) error {
		_, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible))
		return err
	})
	if err != nil {
		b.fatal("click %s and wait for the next page: %v", css, err)
	}
}

// Type types text into the form field the CSS selector finds.
func (b *Browser) Type(css, text string) {
	b.t.Helper()
	b.Do(chromedp.SendKeys(chromedp.CSS(css), text, chromedp.NodeVisible))
}

// SetValue sets the value of the form field (a select's option value).
func (b *Browser) SetValue(css, value string) {
	b.t.Helper()
	b.Do(chromedp.SetValue(chromedp.CSS(css), value, chromedp.NodeVisible))
}

// Text returns the visible text of the first element the CSS selector
// finds, waiting for it.
func (b *Browser) Text(css string) string {
	b.t.Helper()
	var text string
	err := b.step(func(ctx context.Context) (err error) {
		text, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css), chromedp.NodeVisible))
		return err
	})
	if err != nil {
		b.fatal("text of %s: %v", css, err)
	}
	return strings.TrimSpace(text)
}

// Eval evaluates a JavaScript expression in the page and decodes its
// value.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	var v T
	err := b.step(func(ctx context.Context) (err error) {
		v, err = chromedp.Run(ctx, chromedp.Evaluate[T](expr))
		return err
	})
	if err != nil {
		b.fatal("evaluate %s: %v", expr, err)
	}
	return v
}

// URL returns the address of the page the tab shows.
func (b *Browser) URL() string {
	b.t.Helper()
	var u string
	err := b.step(func(ctx context.Context) (err error) {
		u, err = chromedp.Run(ctx, chromedp.Location())
		return err
	})
	if err != nil {
		b.fatal("location: %v", err)
	}
	return u
}

// WaitFor waits until the page shows an element that the CSS selector
// finds and that is visible. It outlasts navigations, so it also waits
// for a page that moves on by itself (a refresh or a script).
func (b *Browser) WaitFor(css string, timeout time.Duration) {
	b.t.Helper()
	b.waitUntil(timeout, "a visible "+css, func(ctx context.Context) (bool, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(
			`(() => { const e = document.querySelector(%q); return !!e && !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length) })()`, css)))
	})
}

// WaitURL waits until the tab's address matches re.
func (b *Browser) WaitURL(re *regexp.Regexp, timeout time.Duration) string {
	b.t.Helper()
	var last string
	b.waitUntil(timeout, "an address matching "+re.String(), func(ctx context.Context) (bool, error) {
		u, err := chromedp.Run(ctx, chromedp.Location())
		if err == nil {
			last = u
		}
		return err == nil && re.MatchString(u), err
	})
	return last
}

// waitUntil polls cond every 50ms; errors (a page between two loads) are
// retried until timeout.
func (b *Browser) waitUntil(timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := func() (bool, error) {
			ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
			defer cancel()
			return cond(ctx)
		}()
		if ok {
			return
		}
		if err != nil {
			lastErr = err
		}
		if time.Now().After(deadline) {
			b.fatal("waited %v for %s (last error: %v)", timeout, what, lastErr)
		}
		if b.ctx.Err() != nil {
			b.fatal("browser gone while waiting for %s: %v", what, b.ctx.Err())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot saves a PNG of the whole page as name.png in the artifacts
// directory and returns its path.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png, err := b.screenshot()
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(ArtifactsDir(b.t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

func (b *Browser) screenshot() ([]byte, error) {
	var png []byte
	err := b.step(func(ctx context.Context) (err error) {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		return err
	})
	return png, err
}

// fatal fails the test with msg, the tab's address and the start of its
// text, and saves a screenshot of the failure.
func (b *Browser) fatal(format string, args ...any) {
	b.t.Helper()
	msg := fmt.Sprintf(format, args...)
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	if u, err := chromedp.Run(ctx, chromedp.Location()); err == nil {
		msg += "\n  at " + u
	}
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`)); err == nil {
		if len(text) > 600 {
			text = text[:600] + "…"
		}
		msg += "\n  page text: " + strings.ReplaceAll(text, "\n", " | ")
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		name := "FAILED-" + safeName(b.t.Name()) + ".png"
		path := filepath.Join(ArtifactsDir(b.t), name)
		if os.WriteFile(path, png, 0o644) == nil {
			msg += "\n  screenshot: " + path
		}
	}
	for _, p := range b.Problems() {
		msg += "\n  browser: " + p
	}
	b.t.Fatal(msg)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// ArtifactsDir returns the directory for screenshots, creating it:
// $PAYKIT_ARTIFACTS, or testdata/artifacts at the module root (ignored by
// git).
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// moduleRoot is the nearest directory above the working directory (a
// test's package directory) that has go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("browsertest: no go.mod above the working directory")
		}
		dir = parent
	}
}
