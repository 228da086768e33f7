package browsertest_test

import (
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/browsertest"
)

// The harness itself, against pages served on loopback: it sees a form
// post, a page that moves on by itself, a CSP violation and a screenshot.
func TestBrowserHarness(t *testing.T) {
	is := is.New(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		_, _ = w.Write([]byte(`<!doctype html><title>form</title>
<form method="post" action="/posted"><label for="n">Name</label><input id="n" name="n"><button>Send</button></form>`))
	})
	mux.HandleFunc("POST /posted", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		// Moves on by itself after a moment, as a status page does.
		_, _ = w.Write([]byte(`<!doctype html><meta http-equiv="refresh" content="0;url=/done?n=` +
			r.FormValue("n") + `"><title>wait</title><p>wait</p>`))
	})
	mux.HandleFunc("GET /done", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		// The inline style breaks the CSP: the harness must notice.
		_, _ = w.Write([]byte(`<!doctype html><title>done</title><style>p{color:red}</style><p id="done">hello ` +
			r.FormValue("n") + `</p>`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := browsertest.New(t)
	b.Navigate(srv.URL + "/form")
	b.Do() // no actions: fine
	b.Click("#n")
	b.Type("#n", "ada")
	b.ClickAndLoad("button")
	b.WaitFor("#done", 10*time.Second)
	is.Equal(b.Text("#done"), "hello ada")
	u := b.WaitURL(regexp.MustCompile(`/done\?n=ada$`), 5*time.Second)
	is.True(strings.HasPrefix(u, srv.URL))

	// The CSP violation of /done is reported (it may come a moment after
	// the load).
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Problems()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	problems := b.Problems()
	is.True(len(problems) > 0)
	is.True(strings.Contains(problems[0], "Content Security Policy")) // a CSP report

	path := b.Screenshot("harness-done")
	f, err := os.Open(path)
	is.NoErr(err)
	defer f.Close()
	img, err := png.Decode(f)
	is.NoErr(err)
	is.Equal(img.Bounds().Dx(), browsertest.ViewportWidth) // phone-sized page
}
