package paykit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Page limits of the contract.
const (
	DefaultPageLimit = 25
	MaxPageLimit     = 100
)

// Page is one page of a list: the contract's list envelope.
type Page[T any] struct {
	Data       []T
	HasMore    bool
	NextCursor string // empty when there is no further page
}

// MarshalJSON renders the list envelope; next_cursor is null on the last page.
func (p Page[T]) MarshalJSON() ([]byte, error) {
	data := p.Data
	if data == nil {
		data = []T{}
	}
	return json.Marshal(struct {
		Object     string  `json:"object"`
		Data       []T     `json:"data"`
		HasMore    bool    `json:"has_more"`
		NextCursor *string `json:"next_cursor"`
	}{"list", data, p.HasMore, nullString(p.NextCursor)})
}

// PageParams are the paging inputs of every list: Limit 0 means the default.
type PageParams struct {
	Limit  int
	Cursor string
}

// pageQuery validates p and decodes its cursor for a list of kind.
func (s *Service) pageQuery(kind string, p PageParams) (limit int, after *Position, err error) {
	limit = p.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > MaxPageLimit {
		return 0, nil, InvalidRequest("limit", "limit must be between 1 and %d.", MaxPageLimit)
	}
	if p.Cursor != "" {
		pos, ok := s.decodeCursor(kind, p.Cursor)
		if !ok {
			return 0, nil, InvalidRequest("cursor", "cursor is not a valid cursor for this list.")
		}
		after = &pos
	}
	return limit, after, nil
}

// makePage cuts rows (fetched with limit+1) into a Page.
func makePage[T any](s *Service, kind string, rows []T, limit int, pos func(*T) Position) *Page[T] {
	page := &Page[T]{Data: rows}
	if len(rows) > limit {
		page.Data = rows[:limit]
		page.HasMore = true
		page.NextCursor = s.encodeCursor(kind, pos(&page.Data[limit-1]))
	}
	return page
}

// A cursor is base64url("unixmilli.id") + "." + base64url(HMAC-SHA256 over
// the kind and that payload, first 16 bytes): opaque and tamper-evident.
func (s *Service) encodeCursor(kind string, p Position) string {
	payload := strconv.FormatInt(p.CreatedAt.UnixMilli(), 10) + "." + p.ID
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(s.cursorMAC(kind, payload))
}

func (s *Service) decodeCursor(kind, cursor string) (Position, bool) {
	enc, sig, ok := strings.Cut(cursor, ".")
	if !ok {
		return Position{}, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.cursorMAC(kind, string(payload))) {
		return Position{}, false
	}
	ms, id, ok := strings.Cut(string(payload), ".")
	if !ok || id == "" {
		return Position{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return Position{}, false
	}
	return Position{CreatedAt: time.UnixMilli(n).UTC(), ID: id}, true
}

func (s *Service) cursorMAC(kind, payload string) []byte {
	m := hmac.New(sha256.New, s.signingKey)
	m.Write([]byte("cursor\x00" + kind + "\x00" + payload))
	return m.Sum(nil)[:16]
}
