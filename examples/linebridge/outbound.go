package linebridge

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// Deliver implements bridges.Bridge: the reply's markdown becomes plain
// text in chunks of at most ChunkLimit characters, and each chunk is
// written to the connection of out.Route.To as "MSG <line>" lines closed
// by "END <message id>"; each attachment becomes one such message naming
// it, because a line cannot carry a file. ReplyToMessageID and Silent
// mean nothing here and are ignored. With out.Ledger set, pieces already
// recorded are not sent again (bridges.SendOnce), so a delivery repeated
// after a crash sends only what is missing.
//
// It blocks while the client is slow to read, at most the write timeout
// or until ctx's deadline. A piece for a chat without an open connection
// fails with an error wrapping ErrUnknownChat; a failed write closes the
// connection.
func (b *Bridge) Deliver(ctx context.Context, out bridges.Outbound) (bridges.Receipt, error) {
	pieces := render(out, b.opts.ChunkLimit)
	var c *conn // looked up once something is to be sent
	var rc bridges.Receipt
	for i, piece := range pieces {
		id, err := bridges.SendOnce(ctx, out, piece.key, func() (bridges.MessageID, error) {
			if c == nil {
				var err error
				if c, err = b.lookup(string(out.Route.To)); err != nil {
					return "", err
				}
			}
			return c.send(ctx, piece.lines)
		})
		if err != nil {
			return rc, fmt.Errorf("linebridge: deliver piece %d of %d: %w", i+1, len(pieces), err)
		}
		rc.MessageIDs = append(rc.MessageIDs, id)
	}
	if c != nil {
		b.tracker.Outbound()
	}
	return rc, nil
}

// Typing implements bridges.Typer: a "TYPING" line. The protocol has no
// way to clear it; the reply's lines do.
func (b *Bridge) Typing(ctx context.Context, route core.Route) error {
	c, err := b.lookup(string(route.To))
	if err != nil {
		return err
	}
	return c.write(ctx, "TYPING")
}

// send writes one piece of a reply, its "MSG <line>" lines and "END
// <id>", and returns its message id: the chat and the piece's number on
// the connection, "<chat>/<n>".
func (c *conn) send(ctx context.Context, lines []string) (bridges.MessageID, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.id + "/" + strconv.Itoa(c.sent+1)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("MSG ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("END " + id + "\n")
	if err := c.writeLocked(ctx, b.String()); err != nil {
		return "", err
	}
	c.sent++
	return bridges.MessageID(id), nil
}

// piece is one message of a reply: its ledger key (SendOnce's piece) and
// its lines.
type piece struct {
	key   string
	lines []string
}

// render turns an Outbound into the pieces Deliver writes, in order: the
// text's chunks ("0", "1", ...), then one line per attachment ("m0",
// "m1", ...). It is pure: what the client will read, as data.
func render(out bridges.Outbound, limit int) []piece {
	var pieces []piece
	for i, chunk := range markup.RenderChunks(out.Text, markup.Plain, limit, markup.ModeLength) {
		pieces = append(pieces, piece{key: strconv.Itoa(i), lines: strings.Split(strings.ReplaceAll(chunk, "\r", ""), "\n")})
	}
	for i, media := range out.MediaURLs {
		name := media
		if !strings.Contains(media, "://") {
			// A local file under the state directory: its path means
			// nothing to the client.
			name = filepath.Base(media)
		}
		pieces = append(pieces, piece{key: "m" + strconv.Itoa(i), lines: []string{"[attachment: " + name + "]"}})
	}
	return pieces
}
