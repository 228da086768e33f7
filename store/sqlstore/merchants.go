package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// merchantRow is a row of merchants. Version is kept for future updates.
type merchantRow struct {
	bun.BaseModel `bun:"table:merchants"`

	ID        string    `bun:"id,pk"`
	Name      string    `bun:"name"`
	CreatedAt time.Time `bun:"created_at"`
	Version   int64     `bun:"version"`
}

// CreateMerchant implements paykit.Tx.
func (t tx) CreateMerchant(ctx context.Context, m *paykit.Merchant) error {
	row := &merchantRow{ID: m.ID, Name: m.Name, CreatedAt: m.CreatedAt.UTC()}
	return t.insert(ctx, "merchants", row, uniqueKey{"id", "id = ?", []any{m.ID}})
}

// GetMerchant implements paykit.Tx.
func (t tx) GetMerchant(ctx context.Context, id string) (*paykit.Merchant, error) {
	var row merchantRow
	if err := t.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, mapError("get merchant", err)
	}
	return &paykit.Merchant{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt.UTC()}, nil
}

// apiKeyRow is a row of api_keys.
type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID          string     `bun:"id,pk"`
	MerchantID  string     `bun:"merchant_id"`
	Environment string     `bun:"environment"`
	PublicKey   string     `bun:"public_key"`
	SecretHash  string     `bun:"secret_hash"`
	SecretLast4 string     `bun:"secret_last4"`
	CreatedAt   time.Time  `bun:"created_at"`
	RevokedAt   *time.Time `bun:"revoked_at"`
	Version     int64      `bun:"version"`
}

func toAPIKeyRow(k *paykit.APIKey) *apiKeyRow {
	return &apiKeyRow{
		ID: k.ID, MerchantID: k.MerchantID, Environment: string(k.Environment), PublicKey: k.PublicKey,
		SecretHash: k.SecretHash, SecretLast4: k.SecretLast4, CreatedAt: k.CreatedAt.UTC(),
		RevokedAt: utcPtr(k.RevokedAt), Version: k.Version,
	}
}

func (r *apiKeyRow) apiKey() paykit.APIKey {
	return paykit.APIKey{
		ID: r.ID, MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment), PublicKey: r.PublicKey,
		SecretHash: r.SecretHash, SecretLast4: r.SecretLast4, CreatedAt: r.CreatedAt.UTC(),
		RevokedAt: utcPtr(r.RevokedAt), Version: r.Version,
	}
}

// CreateAPIKey implements paykit.Tx.
func (t tx) CreateAPIKey(ctx context.Context, k *paykit.APIKey) error {
	return t.insert(ctx, "api_keys", toAPIKeyRow(k),
		uniqueKey{"id", "id = ?", []any{k.ID}},
		uniqueKey{"public_key", "public_key = ?", []any{k.PublicKey}})
}

// GetAPIKey implements paykit.Tx.
func (t tx) GetAPIKey(ctx context.Context, id string) (*paykit.APIKey, error) {
	return t.getAPIKey(ctx, "id = ?", id)
}

// GetAPIKeyByPublicKey implements paykit.Tx.
func (t tx) GetAPIKeyByPublicKey(ctx context.Context, publicKey string) (*paykit.APIKey, error) {
	return t.getAPIKey(ctx, "public_key = ?", publicKey)
}

func (t tx) getAPIKey(ctx context.Context, where string, arg string) (*paykit.APIKey, error) {
	var row apiKeyRow
	if err := t.db.NewSelect().Model(&row).Where(where, arg).Scan(ctx); err != nil {
		return nil, mapError("get API key", err)
	}
	k := row.apiKey()
	return &k, nil
}

// UpdateAPIKey implements paykit.Tx.
func (t tx) UpdateAPIKey(ctx context.Context, k *paykit.APIKey) error {
	row := toAPIKeyRow(k)
	row.Version++
	res, err := t.db.NewUpdate().Model(row).Where("id = ?", k.ID).Where("version = ?", k.Version).Exec(ctx)
	if err != nil {
		return mapError("update API key", err)
	}
	err = checkUpdated(ctx, "update API key", res, t.db.NewSelect().Table("api_keys").Where("id = ?", k.ID))
	if err == nil {
		k.Version = row.Version
	}
	return err
}

// ListAPIKeys implements paykit.Tx.
func (t tx) ListAPIKeys(ctx context.Context, merchantID string) ([]paykit.APIKey, error) {
	var rows []apiKeyRow
	if err := newestFirst(t.db.NewSelect().Model(&rows).Where("merchant_id = ?", merchantID), nil, 0).Scan(ctx); err != nil {
		return nil, mapError("list API keys", err)
	}
	out := make([]paykit.APIKey, len(rows))
	for i := range rows {
		out[i] = rows[i].apiKey()
	}
	return out, nil
}

// auditEventRow is a row of audit_events.
type auditEventRow struct {
	bun.BaseModel `bun:"table:audit_events"`

	ID          string    `bun:"id,pk"`
	Actor       string    `bun:"actor"`
	Action      string    `bun:"action"`
	TargetType  string    `bun:"target_type"`
	TargetID    string    `bun:"target_id"`
	MerchantID  string    `bun:"merchant_id"`
	Environment string    `bun:"environment"`
	Details     string    `bun:"details,nullzero"`
	CreatedAt   time.Time `bun:"created_at"`
}

// CreateAuditEvent implements paykit.Tx.
func (t tx) CreateAuditEvent(ctx context.Context, e *paykit.AuditEvent) error {
	details, err := mapToJSON(e.Details)
	if err != nil {
		return mapError("create audit event", err)
	}
	row := &auditEventRow{
		ID: e.ID, Actor: e.Actor, Action: e.Action, TargetType: e.TargetType, TargetID: e.TargetID,
		MerchantID: e.MerchantID, Environment: string(e.Environment), Details: details, CreatedAt: e.CreatedAt.UTC(),
	}
	return t.insert(ctx, "audit_events", row, uniqueKey{"id", "id = ?", []any{e.ID}})
}

// ListAuditEvents implements paykit.Tx.
func (t tx) ListAuditEvents(ctx context.Context, q paykit.ListQuery[paykit.AuditListParams]) ([]paykit.AuditEvent, error) {
	var rows []auditEventRow
	sel := t.db.NewSelect().Model(&rows)
	if q.Filter.MerchantID != "" {
		sel = sel.Where("merchant_id = ?", q.Filter.MerchantID)
	}
	if q.Filter.Action != "" {
		sel = sel.Where("action = ?", q.Filter.Action)
	}
	if err := newestFirst(sel, q.After, q.Limit).Scan(ctx); err != nil {
		return nil, mapError("list audit events", err)
	}
	out := make([]paykit.AuditEvent, len(rows))
	for i, r := range rows {
		details, err := fromJSONMap(r.Details)
		if err != nil {
			return nil, mapError("list audit events", err)
		}
		out[i] = paykit.AuditEvent{
			ID: r.ID, Actor: r.Actor, Action: r.Action, TargetType: r.TargetType, TargetID: r.TargetID,
			MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment), Details: details,
			CreatedAt: r.CreatedAt.UTC(),
		}
	}
	return out, nil
}
