package paykit

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit/internal/contract"
	"github.com/paykit/paykit/internal/wire"
)

// Page is one page of a list: the contract's list envelope.
type Page[T any] struct {
	Data       []T
	HasMore    bool
	NextCursor string // empty when there is no further page
}

// PageParams are the paging inputs of every list: Limit is 1 to 100, 0
// meaning 25.
type PageParams struct {
	Limit  int
	Cursor string
}

// pageQuery validates p and decodes its cursor for a list of kind.
func (s *Service) pageQuery(kind string, p PageParams) (limit int, after *Position, err error) {
	limit = p.Limit
	if limit == 0 {
		limit = contract.DefaultPageLimit
	}
	if limit < 1 || limit > contract.MaxPageLimit {
		return 0, nil, invalidRequest("limit", "limit must be between 1 and %d.", contract.MaxPageLimit)
	}
	if p.Cursor != "" {
		pos, ok := s.decodeCursor(kind, p.Cursor)
		if !ok {
			return 0, nil, invalidRequest("cursor", "cursor is not a valid cursor for this list.")
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

// A cursor seals "unixmilli.id" for one kind of list.
func (s *Service) encodeCursor(kind string, p Position) string {
	return s.seal("cursor."+kind, strconv.FormatInt(p.CreatedAt.UnixMilli(), 10)+"."+p.ID)
}

func (s *Service) decodeCursor(kind, cursor string) (Position, bool) {
	payload, ok := s.unseal("cursor."+kind, cursor)
	if !ok {
		return Position{}, false
	}
	ms, id, ok := strings.Cut(payload, ".")
	if !ok || id == "" {
		return Position{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return Position{}, false
	}
	return Position{CreatedAt: time.UnixMilli(n).UTC(), ID: id}, true
}

// ListParams are the filters of the lists of payment intents, payout
// intents and checkouts (the query parameters of GET /payment_intents), with
// S their status type: ListParams[PaymentStatus], ListParams[PayoutStatus],
// ListParams[CheckoutStatus]. RefundListParams adds to them for refunds.
// Empty fields do not filter.
type ListParams[S ~string] struct {
	PageParams
	Statuses          []S
	Currency          string
	Country           string
	MerchantReference string
	CreatedAfter      *time.Time // inclusive
	CreatedBefore     *time.Time // exclusive
}

// getScoped reads the resource id of the caller's scope with get: an
// unknown id is not_found naming kind ("refund").
func getScoped[T any](ctx context.Context, p Principal, kind, id string, get func(context.Context, Scope, string) (*T, error)) (*T, error) {
	v, err := get(ctx, p.Scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound(kind)
	}
	if err != nil {
		return nil, internalError(err)
	}
	return v, nil
}

// listScoped is a list of kind ("refund") in the caller's scope: the page
// parameters, then check of the filters, then one more row than the page
// from list, after the cursor. unmatched says the filter names something
// the resource never has (a country of a refund): the page is empty.
func listScoped[T, F any](ctx context.Context, s *Service, p Principal, kind string, page PageParams, filter F, check func() error,
	unmatched bool, list func(context.Context, ListQuery[F]) ([]T, error), pos func(*T) Position) (*Page[T], error) {
	limit, after, err := s.pageQuery(kind, page)
	if err != nil {
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}
	rows, err := list(ctx, ListQuery[F]{Scope: p.Scope, Filter: filter, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	if unmatched {
		rows = rows[:0]
	}
	return makePage(s, kind, rows, limit, pos), nil
}

// checkIDFilter refuses an id filter (name) that is not UTF-8 text
// without NUL characters.
func checkIDFilter(name, v string) error {
	if !wire.ValidText(v) {
		return invalidRequest(name, "%s must be UTF-8 text without NUL characters.", name)
	}
	return nil
}
