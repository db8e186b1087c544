package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// errFrameTooBig is what a frameGuard's Read returns once a frame header
// has announced a message over the limit. The WebSocket library wraps it,
// so errors.Is finds it in the error of the read that hit it.
var errFrameTooBig = errors.New("gateway: frame header announces a message over the limit")

// frameGuard sits between a hijacked WebSocket connection and the
// WebSocket library and reads every frame header on its way through. The
// library checks a message's size only as its bytes arrive, so a header
// announcing 2^62 bytes followed by nothing held the socket until the
// handshake timeout, and after the handshake forever. The guard sees the
// announced length as soon as the header passes and refuses the message
// then: the read that delivers the header succeeds, readMessage finds the
// verdict (tooBig) and closes with 1009, and every later read fails with
// errFrameTooBig, so nothing waits for the announced bytes.
//
// It also remembers the length each message's first frame announced, so
// readMessage can reserve the bytes of the message body before reading it
// (see decodeBudget).
//
// Reads come from the connection's reader, or from the library's close
// handshake; the library serialises them. mu guards the state they share
// with readMessage, which asks for the verdict between reads.
type frameGuard struct {
	net.Conn
	src io.Reader // the bytes the HTTP server had buffered, then Conn

	mu     sync.Mutex
	limit  int64
	tooBig bool
	starts []msgStart // messages whose first header passed, not yet taken

	// Header parser state; only Read touches it.
	hdr    [14]byte
	have   int   // header bytes in hdr
	need   int   // header length, known once two bytes are in
	skip   int64 // payload bytes of the current frame still to pass
	msgLen int64 // bytes the current message's frames announced so far
}

// msgStart is what a message's first frame header says about it.
type msgStart struct {
	size  int64 // the first frame's payload length
	whole bool  // the first frame is the last: size is the message's
}

// setLimit sets the largest message, in bytes, that passes; readMessage
// sets it before each message it reads (64 KiB before the handshake, the
// policy's maxPayload after it). A header that has already passed was
// judged against the limit of its time, as OpenClaw's ws library does.
func (g *frameGuard) setLimit(n int64) {
	g.mu.Lock()
	g.limit = n
	g.mu.Unlock()
}

// next takes the oldest message start that passed, and reports whether a
// header has announced a message over the limit.
func (g *frameGuard) next() (m msgStart, tooBig bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tooBig {
		return msgStart{}, true
	}
	if len(g.starts) == 0 {
		// Not reached: the library returned a message whose header did
		// not pass here. Treat its size as unknown.
		return msgStart{size: -1}, false
	}
	m = g.starts[0]
	g.starts = g.starts[1:]
	if len(g.starts) == 0 {
		g.starts = nil
	}
	return m, false
}

// Read passes bytes from the connection to the library, parsing the frame
// headers among them.
func (g *frameGuard) Read(p []byte) (int, error) {
	g.mu.Lock()
	stop := g.tooBig
	g.mu.Unlock()
	if stop {
		return 0, errFrameTooBig
	}
	n, err := g.src.Read(p)
	if n > 0 {
		g.scan(p[:n])
	}
	return n, err
}

// scan advances the parser over b.
func (g *frameGuard) scan(b []byte) {
	for len(b) > 0 {
		if g.skip > 0 {
			k := int64(len(b))
			if k > g.skip {
				k = g.skip
			}
			g.skip -= k
			b = b[k:]
			continue
		}
		g.hdr[g.have] = b[0]
		g.have++
		b = b[1:]
		if g.have == 2 {
			g.need = 2
			switch g.hdr[1] & 0x7f {
			case 126:
				g.need += 2
			case 127:
				g.need += 8
			}
			if g.hdr[1]&0x80 != 0 {
				g.need += 4 // the client's masking key
			}
		}
		if g.have >= 2 && g.have == g.need {
			g.header()
			g.have, g.need = 0, 0
		}
	}
}

// header judges one complete frame header.
func (g *frameGuard) header() {
	fin, opcode := g.hdr[0]&0x80 != 0, g.hdr[0]&0x0f
	var length uint64
	switch l := g.hdr[1] & 0x7f; l {
	case 126:
		length = uint64(g.hdr[2])<<8 | uint64(g.hdr[3])
	case 127:
		for _, c := range g.hdr[2:10] {
			length = length<<8 | uint64(c)
		}
	default:
		length = uint64(l)
	}
	if length > math.MaxInt64 {
		length = math.MaxInt64
	}
	g.skip = int64(length)
	if opcode&0x8 != 0 {
		return // a control frame: the library checks it (≤ 125 bytes)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch opcode {
	case 0x1, 0x2: // text, binary: a new message
		g.msgLen = int64(length)
		if !g.tooBig {
			g.starts = append(g.starts, msgStart{size: int64(length), whole: fin})
		}
	case 0x0: // continuation
		if g.msgLen > math.MaxInt64-int64(length) {
			g.msgLen = math.MaxInt64
		} else {
			g.msgLen += int64(length)
		}
	default:
		return // reserved: the library fails the connection
	}
	if g.msgLen > g.limit {
		// From here every read fails: neither readMessage nor the
		// close handshake waits for the announced bytes.
		g.tooBig = true
	}
}

// lingerTimeout bounds how long a connection refused for an oversized
// message is drained before it is closed.
const lingerTimeout = time.Second

// Close closes the connection. After a refused header it lingers first,
// reading and discarding what the peer is still sending for up to
// lingerTimeout: closing a socket with unread bytes makes the kernel
// answer with a reset, and a peer still writing its message would lose
// the 1009 close frame already on its way and see only the reset.
func (g *frameGuard) Close() error {
	g.mu.Lock()
	refused := g.tooBig
	g.mu.Unlock()
	if refused && g.src != nil {
		// The library's reads fail from the refusal on, so this is the
		// only reader.
		if g.Conn.SetReadDeadline(time.Now().Add(lingerTimeout)) == nil {
			_, _ = io.Copy(io.Discard, g.src)
		}
	}
	return g.Conn.Close()
}

// acceptWS upgrades r to a WebSocket whose bytes pass through a
// frameGuard, which it returns with the connection; its limit starts at
// the pre-handshake limit. The library's own read limit is off: it counts
// bytes only as they arrive, and the guard and readMessage close with the
// protocol's reasons.
func acceptWS(w http.ResponseWriter, r *http.Request) (*websocket.Conn, *frameGuard, error) {
	g := &frameGuard{limit: protocol.MaxPreauthPayloadBytes}
	// Origins are checked in the handshake, where the client learns why
	// (CONTROL_UI_ORIGIN_NOT_ALLOWED), not by Accept.
	ws, err := websocket.Accept(&guardedWriter{ResponseWriter: w, guard: g}, r,
		&websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, nil, err
	}
	ws.SetReadLimit(-1)
	return ws, g, nil
}

// guardedWriter is the ResponseWriter the WebSocket library hijacks: its
// Hijack hands the library the connection behind a frameGuard.
type guardedWriter struct {
	http.ResponseWriter
	guard *frameGuard
}

// Hijack takes the connection over from the HTTP server. What the server
// had read past the request stays in front of the connection's bytes, and
// the returned reader reads through the guard.
func (w *guardedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	g := w.guard
	g.Conn, g.src = conn, conn
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ := brw.Reader.Peek(n)
		g.src = io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn)
	}
	brw.Reader.Reset(g)
	return g, brw, nil
}

// Unwrap gives http.ResponseController the server's ResponseWriter.
func (w *guardedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// smallMessageBytes is the largest inbound message read without a
// reservation from the decode budget: the pre-handshake limit, so an
// unauthenticated socket never waits on (or holds) the budget, and small
// requests are never queued behind an upload. Their memory is bounded by
// the connection caps instead.
const smallMessageBytes = protocol.MaxPreauthPayloadBytes

// decodeBudget caps the bytes of large inbound messages held at once, over
// all connections, from the moment their body is read until the request is
// handled (conn.readMessage reserves, the next readMessage or the
// connection's end releases). Eight clients sending 24 MiB each took the
// process from 45 to 619 MB when every one was read and decoded at once;
// now the others wait, in arrival order, and TCP holds their bytes. Every
// reservation is at most the message limit, which the capacity is never
// below, so each waiter is eventually served. Safe for concurrent use.
type decodeBudget struct {
	mu      sync.Mutex
	cap     int64
	used    int64
	peak    int64
	waiters []*budgetWaiter // oldest first
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when the bytes are granted
}

func newDecodeBudget(capacity int64) *decodeBudget {
	return &decodeBudget{cap: capacity}
}

// acquire reserves n bytes, waiting in line until they fit or ctx ends.
// n is clamped to the capacity.
func (b *decodeBudget) acquire(ctx context.Context, n int64) error {
	n = min(n, b.cap)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.cap {
		b.grantLocked(n)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted meanwhile: hand the bytes back.
			b.used -= n
		default:
			for i, x := range b.waiters {
				if x == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
		}
		b.wakeLocked()
		b.mu.Unlock()
		return ctx.Err()
	}
}

// release returns n bytes reserved by acquire (clamped the same way).
func (b *decodeBudget) release(n int64) {
	if n <= 0 {
		return
	}
	n = min(n, b.cap)
	b.mu.Lock()
	b.used -= n
	b.wakeLocked()
	b.mu.Unlock()
}

func (b *decodeBudget) grantLocked(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used)
}

// wakeLocked grants waiters in order while the oldest fits.
func (b *decodeBudget) wakeLocked() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.cap {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.grantLocked(w.n)
		close(w.ready)
	}
	if len(b.waiters) == 0 {
		b.waiters = nil
	}
}

// state returns the bytes reserved, the most ever reserved at once, and
// the number of readers waiting.
func (b *decodeBudget) state() (used, peak int64, waiting int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak, len(b.waiters)
}
