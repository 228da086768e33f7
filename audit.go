package paykit

import (
	"context"
	"time"
)

// AuditEvent records one operator action: who, what, on which target, when.
type AuditEvent struct {
	ID          string            `json:"id"`
	Actor       string            `json:"actor"`
	Action      string            `json:"action"`
	TargetType  string            `json:"target_type"`
	TargetID    string            `json:"target_id"`
	MerchantID  string            `json:"merchant_id"`
	Environment Environment       `json:"environment"`
	Details     map[string]string `json:"details"`
	CreatedAt   time.Time         `json:"created_at"`
}

// audit appends an operator audit event in tx, stamping id and time.
func (s *Service) audit(ctx context.Context, tx Tx, e *AuditEvent) error {
	e.ID = s.newID("aud")
	e.CreatedAt = s.Now()
	return tx.CreateAuditEvent(ctx, e)
}

// AuditListParams filter the audit log; empty fields do not filter.
type AuditListParams struct {
	PageParams
	MerchantID string
	Action     string
}

// ListAuditEvents returns the operator audit log, newest first.
func (s *Service) ListAuditEvents(ctx context.Context, p AuditListParams) (*Page[AuditEvent], error) {
	limit, after, err := s.pageQuery("audit_event", p.PageParams)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListAuditEvents(ctx, ListQuery[AuditListParams]{Filter: p, After: after, Limit: limit + 1})
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "audit_event", rows, limit, func(e *AuditEvent) Position { return Position{e.CreatedAt, e.ID} }), nil
}
