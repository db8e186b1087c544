package linebridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
)

// conn is one client connection: one person in a direct chat. Its reader
// goroutine (handle) and any number of Deliver calls write to it; mu keeps
// their lines whole and in order.
type conn struct {
	nc           net.Conn
	id           string // the chat id, Route.To
	writeTimeout time.Duration

	mu     sync.Mutex
	sent   int  // reply chunks written, for their message ids
	broken bool // a write failed: the connection is being closed
}

// newConn gives an accepted connection its chat id.
func (b *Bridge) newConn(nc net.Conn) *conn {
	b.mu.Lock()
	b.nextID++
	id := fmt.Sprintf("%s-%d", b.prefix, b.nextID)
	b.mu.Unlock()
	return &conn{nc: nc, id: id, writeTimeout: b.opts.WriteTimeout}
}

// handle runs one connection on its own goroutine until the client hangs
// up, breaks the protocol or stops reading, or ctx ends (which closes the
// connection). Lines are submitted one at a time, in order, and each is
// acknowledged only after Submit returned: OK when it was taken, ERR (send
// it again) when not. Nothing is buffered: while Submit waits for the
// journal, the next line waits in the socket, and a client that sends
// faster than the journal takes is slowed down by TCP.
func (b *Bridge) handle(ctx context.Context, sink bridges.Sink, c *conn) {
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	defer stop()
	defer c.nc.Close()

	r := bufio.NewScanner(c.nc)
	r.Buffer(make([]byte, 0, 4096), MaxLineBytes)
	// Deadlines are wall-clock time, whatever Options.Now says.
	_ = c.nc.SetReadDeadline(time.Now().Add(b.opts.HelloTimeout))
	if !r.Scan() {
		return // gone, or silent too long
	}
	name, err := parseHello(r.Text())
	if err != nil {
		_ = c.write(ctx, "ERR "+err.Error())
		return
	}
	_ = c.nc.SetReadDeadline(time.Time{}) // a chat may be idle for hours
	// Reachable by Deliver before the client can know its chat id.
	b.register(c)
	defer b.unregister(c)
	if c.write(ctx, "WELCOME "+c.id) != nil {
		return
	}
	log := b.opts.Log.With("chat", c.id, "sender", name)
	log.Info("connected", "remote", c.nc.RemoteAddr().String())
	defer log.Info("disconnected")

	seq := 0
	for r.Scan() {
		text := cleanLine(r.Text())
		if text == "" {
			continue
		}
		seq++
		msg := b.norm.inbound(line{chat: c.id, name: name, seq: seq, text: text, at: b.opts.Now()})
		b.tracker.Inbound()
		ack := fmt.Sprintf("OK %d", seq)
		if err := sink.Submit(ctx, msg); err != nil {
			// Nothing was taken: no OK, so the client sends it again.
			log.Warn("message not taken", "seq", seq, "err", err)
			ack = fmt.Sprintf("ERR %d not taken; send it again", seq)
		}
		if c.write(ctx, ack) != nil {
			return
		}
	}
	if errors.Is(r.Err(), bufio.ErrTooLong) {
		_ = c.write(ctx, fmt.Sprintf("ERR a line is longer than %d bytes", MaxLineBytes))
	}
}

// write sends lines in one piece, waiting at most the write timeout (or
// until ctx's deadline, if sooner). A failed write closes the connection:
// a client that does not read is dropped rather than buffered for.
func (c *conn) write(ctx context.Context, lines ...string) error {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeLocked(ctx, b.String())
}

// writeLocked is write with c.mu held.
func (c *conn) writeLocked(ctx context.Context, s string) error {
	if c.broken {
		return fmt.Errorf("chat %s: %w", c.id, net.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline := time.Now().Add(c.writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.nc.SetWriteDeadline(deadline)
	if _, err := c.nc.Write([]byte(s)); err != nil {
		c.broken = true
		c.nc.Close()
		return fmt.Errorf("chat %s: %w", c.id, err)
	}
	return nil
}

// register makes a welcomed connection reachable by Deliver.
func (b *Bridge) register(c *conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conns[c.id] = c
}

// unregister forgets a connection that ended.
func (b *Bridge) unregister(c *conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns[c.id] == c {
		delete(b.conns, c.id)
	}
}

// lookup finds the connection of a chat id.
func (b *Bridge) lookup(chat string) (*conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.conns[chat]
	if !ok {
		return nil, fmt.Errorf("linebridge: chat %q: %w", chat, ErrUnknownChat)
	}
	return c, nil
}

// ErrUnknownChat is wrapped by the errors of Deliver and Typing for a chat
// with no open connection: it closed, or belonged to an earlier process.
// The reply is not sent; the dispatcher records the failed delivery.
var ErrUnknownChat = errors.New("no open connection has this chat id")
