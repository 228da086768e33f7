package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// jobsChannel is the PostgreSQL channel on which instances tell each other
// that jobs are due.
const jobsChannel = "paykit_jobs"

// jobsDue wakes this process's workers, and on PostgreSQL the other
// instances' (a NOTIFY, at most one per notifyEvery).
func (s *Store) jobsDue() {
	s.wakes.Signal()
	if s.pollOnly {
		return
	}
	s.listen.Do(s.startListening)
	select {
	case s.peers <- struct{}{}:
	default: // one is pending already
	}
}

// notifyEvery is the least time between two NOTIFYs of one Store: a burst
// of enqueued jobs sends one.
const notifyEvery = 5 * time.Millisecond

// startListening starts the goroutines of LISTEN/NOTIFY: one that sends
// this process's NOTIFYs, one that LISTENs on a connection of its own and
// wakes this process's workers.
func (s *Store) startListening() {
	s.peers = make(chan struct{}, 1)
	if n := s.db.DB.Stats().MaxOpenConnections; n > 0 {
		s.db.DB.SetMaxOpenConns(n + 1) // the listener's connection is not the pool's
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.closed
		cancel()
	}()
	go s.sendNotifies(ctx)
	go s.receiveNotifies(ctx)
}

func (s *Store) sendNotifies(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.peers:
		}
		// A NOTIFY that fails costs the other instances a poll, no more.
		_, _ = s.db.ExecContext(ctx, "SELECT pg_notify(?, '')", jobsChannel)
		sleepCtx(ctx, notifyEvery)
	}
}

// errNoListen: the database/sql driver is not pgx's, whose connection can
// wait for notifications.
var errNoListen = errors.New("sqlstore: LISTEN needs the pgx driver")

// receiveNotifies LISTENs until ctx ends, reconnecting after a failure;
// every notification wakes this process's workers.
func (s *Store) receiveNotifies(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.listenOnce(ctx)
		if errors.Is(err, errNoListen) {
			return // the workers poll
		}
		sleepCtx(ctx, time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context) error {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNoListen
		}
		pc := c.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+jobsChannel); err != nil {
			return err
		}
		s.wakes.Signal() // what came while no one listened
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				return err
			}
			s.wakes.Signal()
		}
	})
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
