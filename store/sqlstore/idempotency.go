package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// idempotencyRow is a row of idempotency_records.
type idempotencyRow struct {
	bun.BaseModel `bun:"table:idempotency_records"`

	MerchantID    string     `bun:"merchant_id,pk"`
	Environment   string     `bun:"environment,pk"`
	Key           string     `bun:"key,pk"`
	Fingerprint   string     `bun:"fingerprint"`
	State         string     `bun:"state"`
	RecoveryPoint string     `bun:"recovery_point"`
	ResourceID    string     `bun:"resource_id"`
	LockedUntil   *time.Time `bun:"locked_until"`
	ResponseBody  []byte     `bun:"response_body"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
	ExpiresAt     time.Time  `bun:"expires_at"`
	Version       int64      `bun:"version"`
}

// toIdempotencyRow encodes r. The answer goes to response_body as a
// snapshot.
func toIdempotencyRow(r *paykit.IdempotencyRecord) (*idempotencyRow, error) {
	body, err := encodeAnswer(r.Answer)
	if err != nil {
		return nil, err
	}
	return &idempotencyRow{
		MerchantID: r.MerchantID, Environment: string(r.Environment), Key: r.Key, Fingerprint: r.Fingerprint,
		State: string(r.State), RecoveryPoint: r.RecoveryPoint, ResourceID: r.ResourceID,
		LockedUntil: utcPtr(r.LockedUntil), ResponseBody: body,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), Version: r.Version,
	}, nil
}

// scoped adds the record's identity to q.
func scoped[Q interface {
	Where(string, ...any) Q
}](q Q, scope paykit.Scope, key string) Q {
	return inScope(q, scope).Where("? = ?", bun.Ident("key"), key)
}

// CreateIdempotencyRecord implements paykit.Tx.
func (t tx) CreateIdempotencyRecord(ctx context.Context, r *paykit.IdempotencyRecord) error {
	row, err := toIdempotencyRow(r)
	if err != nil {
		return err
	}
	return t.insert(ctx, "idempotency_records", row,
		uniqueKey{"key", `merchant_id = ? AND environment = ? AND "key" = ?`, []any{r.MerchantID, r.Environment, r.Key}})
}

// GetIdempotencyRecord implements paykit.Tx.
func (t tx) GetIdempotencyRecord(ctx context.Context, scope paykit.Scope, key string) (*paykit.IdempotencyRecord, error) {
	var row idempotencyRow
	if err := scoped(t.db.NewSelect().Model(&row), scope, key).Scan(ctx); err != nil {
		return nil, mapError("get idempotency record", err)
	}
	answer, err := decodeAnswer(row.ResponseBody)
	if err != nil {
		return nil, err
	}
	return &paykit.IdempotencyRecord{
		Scope: paykit.Scope{MerchantID: row.MerchantID, Environment: paykit.Environment(row.Environment)},
		Key:   row.Key, Fingerprint: row.Fingerprint, State: paykit.IdempotencyState(row.State),
		RecoveryPoint: row.RecoveryPoint, ResourceID: row.ResourceID, LockedUntil: utcPtr(row.LockedUntil),
		Answer: answer, CreatedAt: row.CreatedAt.UTC(),
		UpdatedAt: row.UpdatedAt.UTC(), ExpiresAt: row.ExpiresAt.UTC(), Version: row.Version,
	}, nil
}

// UpdateIdempotencyRecord implements paykit.Tx.
func (t tx) UpdateIdempotencyRecord(ctx context.Context, r *paykit.IdempotencyRecord) error {
	row, err := toIdempotencyRow(r)
	if err != nil {
		return err
	}
	row.Version++
	if err := t.updateIdempotencyRow(ctx, row, r.Scope, r.Key, r.Version); err != nil {
		return err
	}
	r.Version = row.Version
	return nil
}

// updateIdempotencyRow writes row, whose Version is already the next one,
// over the record under key in scope while its version is still version.
func (t tx) updateIdempotencyRow(ctx context.Context, row *idempotencyRow, scope paykit.Scope, key string, version int64) error {
	q := func() *bun.UpdateQuery {
		return scoped(t.db.NewUpdate().Model(row), scope, key).Where("version = ?", version)
	}
	return t.versionedUpdate(ctx, "update idempotency record", q, func() *bun.SelectQuery {
		return scoped(t.db.NewSelect().Table("idempotency_records"), scope, key)
	}, row, scope.MerchantID, string(scope.Environment), key, version)
}

// DeleteIdempotencyRecord implements paykit.Tx.
func (t tx) DeleteIdempotencyRecord(ctx context.Context, scope paykit.Scope, key string) error {
	res, err := scoped(t.db.NewDelete().Table("idempotency_records"), scope, key).Exec(ctx)
	if err != nil {
		return mapError("delete idempotency record", err)
	}
	return checkUpdated(ctx, "delete idempotency record", res, nil)
}

// PurgeIdempotencyRecords implements paykit.Tx.
func (t tx) PurgeIdempotencyRecords(ctx context.Context, now time.Time) (int, error) {
	res, err := t.db.NewDelete().Table("idempotency_records").
		Where("state = ?", paykit.IdempotencyComplete).Where("expires_at < ?", now.UTC()).
		Exec(ctx)
	if err != nil {
		return 0, mapError("purge idempotency records", err)
	}
	n, err := res.RowsAffected()
	return int(n), mapError("purge idempotency records", err)
}
