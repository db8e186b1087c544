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
