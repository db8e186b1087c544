package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxNotifyPayload is the largest payload Notify sends: PostgreSQL refuses
// NOTIFY payloads of 8,000 bytes or more.
const MaxNotifyPayload = 7999

// Notify sends payload to every connection listening on channel (every
// instance's Listen), once the statement commits. One round trip, bounded
// by ctx. A payload over MaxNotifyPayload is refused with an error.
func (s *Store) Notify(ctx context.Context, channel, payload string) error {
	if len(payload) > MaxNotifyPayload {
		return fmt.Errorf("store: notify %s: payload of %d bytes is over PostgreSQL's limit of %d", channel, len(payload), MaxNotifyPayload)
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		return fmt.Errorf("store: notify %s: %w", channel, err)
	}
	return nil
}

// Listen listens on channel on a connection of its own and calls fn with
// each payload, one at a time, on its goroutine, until ctx ends or stop is
// called (stop waits for it to end). It returns once the first LISTEN is
// in place. When the connection fails it reconnects after a second, and
// again after failures; notifications sent while it was down are lost, so
// callers keep a slower path that does not depend on them.
func (s *Store) Listen(ctx context.Context, channel string, fn func(payload string)) (stop func(), err error) {
	conn, err := s.listenConn(ctx, channel)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for conn != nil {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					conn.Close(context.Background())
					conn = nil
					break
				}
				fn(n.Payload)
			}
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			conn, _ = s.listenConn(ctx, channel)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// listenConn opens a connection outside the pool and listens on channel.
func (s *Store) listenConn(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("store: listen on %s: %w", channel, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("store: listen on %s: %w", channel, err)
	}
	return conn, nil
}

// spillKeep is how long a spilled bus message is kept for its readers.
const spillKeep = 5 * time.Minute

// PutSpill stores a bus message too large for Notify and returns its id,
// which the notice carries instead; messages older than five minutes are
// deleted on the way.
func (s *Store) PutSpill(ctx context.Context, payload []byte) (int64, error) {
	now := s.nowMilli()
	var id int64
	err := s.pool.QueryRow(ctx, `INSERT INTO bus_spill (payload, created_at) VALUES ($1, $2) RETURNING id`, string(payload), now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: spill a bus message: %w", err)
	}
	if id%64 == 0 {
		if _, err := s.pool.Exec(ctx, `DELETE FROM bus_spill WHERE created_at < $1`, now-spillKeep.Milliseconds()); err != nil {
			return id, fmt.Errorf("store: prune spilled bus messages: %w", err)
		}
	}
	return id, nil
}

// Spill returns the bus message PutSpill stored under id.
func (s *Store) Spill(ctx context.Context, id int64) ([]byte, error) {
	var p string
	if err := s.pool.QueryRow(ctx, `SELECT payload FROM bus_spill WHERE id = $1`, id).Scan(&p); err != nil {
		return nil, fmt.Errorf("store: read spilled bus message %d: %w", id, err)
	}
	return []byte(p), nil
}
