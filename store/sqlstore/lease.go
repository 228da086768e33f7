package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/paykit/paykit"
)

// TakeLease implements paykit.Store with one upsert on paykit_leases that
// writes only when the held lease has lapsed: of concurrent callers one
// writes the row, and the others find it live.
func (s *Store) TakeLease(ctx context.Context, l paykit.Lease) (bool, error) {
	res, err := s.db.NewRaw(`INSERT INTO paykit_leases (name, owner, held_until) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, held_until = EXCLUDED.held_until
		WHERE paykit_leases.held_until <= ?`, l.Name, l.Owner, l.Until.UTC(), l.Now.UTC()).Exec(ctx)
	if errors.Is(mapError("take lease", err), paykit.ErrVersionConflict) {
		return false, nil // another instance took it at the same moment
	}
	if err != nil {
		return false, mapError("take lease", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, mapError("take lease", err)
	}
	return n > 0, nil
}

// LeaseHeld implements paykit.Store.
func (s *Store) LeaseHeld(ctx context.Context, name string, now time.Time) (bool, error) {
	held, err := exists(ctx, s.db.NewSelect().Table("paykit_leases").Where("name = ?", name).Where("held_until > ?", now.UTC()))
	if err != nil {
		return false, mapError("read lease", err)
	}
	return held, nil
}

// PurgeLeases implements paykit.Store.
func (s *Store) PurgeLeases(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.NewDelete().Table("paykit_leases").Where("held_until < ?", before.UTC()).Exec(ctx)
	if err != nil {
		return 0, mapError("purge leases", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, mapError("purge leases", err)
	}
	return int(n), nil
}
