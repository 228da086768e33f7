package httpadapter

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The dashboard's pages are one template (dashui/page.html) filled with
// these generic parts: sections of fields, tables and forms.

// dashPageView fills dashui/page.html.
type dashPageView struct {
	Title    string
	Secret   *secretView
	Scope    *scopeView
	Filters  *filters
	Sections []section
}

// secretView is a secret shown once (a new API key or webhook secret).
type secretView struct {
	Label, Value string
}

// scopeView is the merchant and environment picker of scoped pages.
type scopeView struct {
	Merchants []option
	Envs      []option
}

type filters struct {
	Hidden []hidden
	Fields []formField
}

type section struct {
	ID, Heading, Text string
	Stats             []stat
	Fields            []field
	Table             *table
	Forms             []*form
}

type stat struct {
	Value, Label, Href string
}

type field struct {
	Label, ID string
	Value     cell
}

// cell is a value: text, a link when Href is set, coloured by Tone (ok,
// bad, wait), with forms (buttons) after it.
type cell struct {
	Text, Href, Tone, Class string
	Forms                   []*form
}

type table struct {
	Head        []string
	Rows        [][]cell
	Empty       string
	Next, First string
}

type form struct {
	ID, Action, Submit, Class, ButtonID string
	Hidden                              []hidden
	Fields                              []formField
}

type formData struct {
	Form *form
	CSRF string
}

type hidden struct {
	Name, Value string
}

type formField struct {
	Name, Label, Type, Value, Placeholder string
	Required                              bool
	Options                               []option
}

type option struct {
	Value, Label string
	Selected     bool
}

// options makes select options from values (label = value, "" = "Any"),
// selecting cur.
func options(cur string, values ...string) []option {
	out := make([]option, len(values))
	for i, v := range values {
		label := v
		if v == "" {
			label = "Any"
		}
		out[i] = option{Value: v, Label: label, Selected: v == cur}
	}
	return out
}

// link is base+path with the query made of name, value pairs (empty
// values left out).
func link(r *http.Request, path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	u := base(r) + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// pathID escapes an id for a path segment.
func pathID(id string) string { return url.PathEscape(id) }

func text(s string) cell { return cell{Text: s} }

func linked(s, href string) cell { return cell{Text: s, Href: href} }

func mono(s string) cell { return cell{Text: s, Class: "mono"} }

func money(minor int64, currency string) cell {
	return cell{Text: formatMoney(minor, currency), Class: "num"}
}

// balanceMoney is an available balance: below zero (a dispute took more
// than there was) it shows its minus sign in the bad tone.
func balanceMoney(minor int64, currency string) cell {
	c := money(minor, currency)
	if minor < 0 {
		c.Tone = "bad"
	}
	return c
}

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return when(*t)
}

// tone is the colour of a status: done well, done badly, or waiting.
func tone(status string) string {
	switch status {
	case "succeeded", "completed", "enabled", "active", "won", "available", "resolved":
		return "ok"
	case "failed", "cancelled", "expired", "disabled", "returned", "revoked", "needs_attention", "lost", "needs_response":
		return "bad"
	}
	return "wait"
}

func statusCell(status string) cell { return cell{Text: status, Tone: tone(status)} }

// count renders a count read with a bound: "100+" when there were more.
func count(n int, more bool) string {
	if more {
		return strconv.Itoa(n) + "+"
	}
	return strconv.Itoa(n)
}

// parseMoney reads an amount for people ("150.00", "-20", "1,000.5") in
// currency's minor units, without floating point.
func parseMoney(s, currency string) (int64, error) {
	exp, ok := currencyExponent[currency]
	if !ok {
		exp = 2
	}
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(s, ".")
	bad := invalidRequest("amount", "amount must be a number with at most %d decimals, negative to debit.", exp)
	if whole == "" && frac == "" || len(frac) > exp || len(whole) > 15 {
		return 0, bad
	}
	frac += strings.Repeat("0", exp-len(frac))
	digits := whole + frac
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, bad
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, bad
	}
	if neg {
		n = -n
	}
	return n, nil
}
