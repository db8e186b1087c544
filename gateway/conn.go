package gateway

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// writeTimeout bounds one frame write; a client that cannot take a frame in
// this long is gone.
const writeTimeout = 10 * time.Second

// conn is one WebSocket client. Its read loop runs on the HTTP handler's
// goroutine; a writer goroutine exists only while frames are queued, so an
// idle connection costs one goroutine.
type conn struct {
	srv      *Server
	ws       *websocket.Conn
	frames   *frameGuard // the socket's bytes pass it (acceptWS)
	id       string
	ip       string
	loopback bool
	origin   string
	log      *slog.Logger
	ctx      context.Context
	cancel   context.CancelFunc
	nonce    string

	// Set by the hub under its preauth lock.
	preauthEl *list.Element // in hub.preauthOrder while unauthenticated
	evicted   bool          // closed to make room under the preauth cap

	// decodeHeld is the decode budget this connection holds for the
	// message it last read; only its reader touches it.
	decodeHeld atomic.Int64

	// Set once by the handshake, before ready is stored; read-only after.
	ready     atomic.Bool
	protocol  int
	role      string
	scopes    []string
	params    protocol.ConnectParams
	deviceID  string
	secretGen int64
	connected time.Time

	mu      sync.Mutex // guards the outbound queue and seq
	queue   []frame
	queued  int64
	writing bool
	closing bool
	seq     int64 // per-connection event seq (protocol v4)

	// follows are the sessions whose chat and agent events the client
	// gets, each with the hub tick it was last followed at; guarded by
	// the hub's mu (hub.follow).
	follows map[core.SessionKey]uint64

	subMu       sync.Mutex
	subscribed  bool            // sessions.subscribe: sessions.changed events
	runs        map[string]bool // runs this client started (tool events)
	closeCode   websocket.StatusCode
	closeReason string

	inflight     sync.WaitGroup // asynchronous answers still to send
	unauthorized int            // consecutive "unauthorized role" answers
}

// send queues a frame without blocking (see enqueueLocked) and reports
// whether it was queued.
func (c *conn) send(b []byte, droppable bool) bool {
	c.mu.Lock()
	return c.enqueueLocked(frame{head: b}, droppable)
}

// sendEvent queues an event frame. v4 clients get the next seq of their
// own connection; v3 clients get v3seq, the broadcast's process-wide seq,
// or no seq when it is negative (a targeted send). The seq is assigned
// under the queue lock, so the frames of one connection leave in seq order.
//
// With co set, a droppable event replaces the body of a queued, unwritten
// frame of the same stream instead, keeping that frame's place and seq: a
// client reading slower than a run streams gets its newest snapshot, not
// every snapshot in turn. The replacement is co.whole's payload, the
// snapshot as a whole, since the increment it would have carried assumed
// the replaced one was read.
func (c *conn) sendEvent(name string, payload []byte, v3seq int64, sv *protocol.StateVersion, droppable bool, co *coalescing) bool {
	c.mu.Lock()
	if co != nil && droppable && !c.closing {
		for i := len(c.queue) - 1; i >= 0; i-- {
			if f := &c.queue[i]; f.coalesce == co.key {
				payload := co.whole(c.protocol)
				grow := int64(len(payload) - len(f.body))
				if c.queued+grow > c.srv.cfg.Policy.MaxBufferedBytes {
					break // dropped below, like any event that does not fit
				}
				f.body = payload
				c.queued += grow
				c.mu.Unlock()
				c.srv.metrics.coalescedEvents.Inc()
				return true
			}
		}
	}
	seq := v3seq
	if c.protocol >= protocol.ProtocolV4 && c.ready.Load() {
		// A dropped event leaves a gap, which tells the client it missed
		// something.
		c.seq++
		seq = c.seq
	}
	f := eventFrame(name, payload, seq, sv)
	if co != nil && droppable {
		f.coalesce = co.key
	}
	return c.enqueueLocked(f, droppable)
}

// enqueueLocked queues a frame, called with c.mu held, which it releases.
// A frame that does not fit the client's buffer is dropped if droppable;
// otherwise the client is a slow consumer and is disconnected
// (openclaw-facts §1.9).
func (c *conn) enqueueLocked(f frame, droppable bool) bool {
	if c.closing {
		c.mu.Unlock()
		return false
	}
	if c.queued+int64(f.len()) > c.srv.cfg.Policy.MaxBufferedBytes {
		queued := c.queued
		c.mu.Unlock()
		if droppable {
			c.srv.metrics.droppedEvents.Inc()
			return false
		}
		c.srv.metrics.slowConsumers.Inc()
		c.log.Warn("closing a slow consumer", "queuedBytes", queued)
		c.closeSlow()
		return false
	}
	c.queue = append(c.queue, f)
	c.queued += int64(f.len())
	if !c.writing {
		c.writing = true
		c.srv.connWG.Add(1)
		go c.writeLoop()
	}
	c.mu.Unlock()
	return true
}

// writeLoop writes queued frames in order and exits when the queue is
// empty, or closes the socket when one was asked for and the queue is
// drained.
func (c *conn) writeLoop() {
	defer c.srv.connWG.Done()
	var buf []byte
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.ctx.Err() != nil {
			c.queue, c.queued = nil, 0
			c.writing = false
			code, reason, closing := c.closeCode, c.closeReason, c.closing
			c.mu.Unlock()
			if closing && code != 0 {
				c.finishClose(code, reason)
			}
			return
		}
		f := c.queue[0]
		c.queue[0] = frame{}
		c.queue = c.queue[1:]
		c.mu.Unlock()

		ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
		var err error
		buf, err = c.writeFrame(ctx, f, buf)
		cancel()
		c.mu.Lock()
		// closeSlow may have emptied the queue meanwhile.
		c.queued = max(0, c.queued-int64(f.len()))
		c.mu.Unlock()
		if err != nil {
			c.cancel()
			continue
		}
		c.srv.metrics.framesOut.Inc()
	}
}

// writeFrame writes f as one text message. A frame up to
// singleFrameBytes is joined in buf (the writer's scratch, returned for
// reuse) and sent as one WebSocket frame; a larger one goes through one
// message writer, part by part, without copying its shared body, which
// the library sends as fragments of one message.
func (c *conn) writeFrame(ctx context.Context, f frame, buf []byte) ([]byte, error) {
	if f.body == nil && f.tail == nil {
		return buf, c.ws.Write(ctx, websocket.MessageText, f.head)
	}
	if f.len() <= singleFrameBytes {
		buf = append(append(append(buf[:0], f.head...), f.body...), f.tail...)
		return buf, c.ws.Write(ctx, websocket.MessageText, buf)
	}
	w, err := c.ws.Writer(ctx, websocket.MessageText)
	if err != nil {
		return buf, err
	}
	for _, p := range [...][]byte{f.head, f.body, f.tail} {
		if _, err := w.Write(p); err != nil {
			_ = w.Close()
			return buf, err
		}
	}
	return buf, w.Close()
}

// singleFrameBytes is the largest frame writeFrame joins into one
// WebSocket frame.
const singleFrameBytes = 16 << 10

// closeAsync closes the connection with a code and reason once the frames
// already queued (a rejection's response) are written; later sends are
// refused. The first call wins.
func (c *conn) closeAsync(code int, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.closeCode, c.closeReason = websocket.StatusCode(code), protocol.TruncateCloseReason(reason)
	if code == protocol.CloseNormal && reason == "" {
		c.closeReason = ""
	}
	if c.writing {
		// The writer closes after the queue drains.
		c.mu.Unlock()
		return
	}
	c.writing = true
	c.srv.connWG.Add(1)
	c.mu.Unlock()
	go c.writeLoop()
}

// slowCloseWait bounds the close handshake with a slow consumer: one that
// does not read will not read the close frame either.
const slowCloseWait = time.Second

// closeSlow disconnects a slow consumer now: its queue is dropped, the
// close frame is tried for slowCloseWait, then the socket is cut.
func (c *conn) closeSlow() {
	c.closeNow(protocol.ClosePolicyViolation, protocol.ReasonSlowConsumer)
}

// closeNow closes the connection without writing what is queued: the
// queue is dropped, the close frame is tried for slowCloseWait (a peer
// that does not read will not read it either), then the socket is cut.
// The first close, of any kind, wins. It does not block.
func (c *conn) closeNow(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.queue, c.queued = nil, 0
	c.mu.Unlock()
	c.srv.connWG.Add(1)
	go func() {
		defer c.srv.connWG.Done()
		done := make(chan struct{})
		go func() {
			_ = c.ws.Close(code, reason)
			close(done)
		}()
		t := time.NewTimer(slowCloseWait)
		select {
		case <-done:
		case <-t.C:
			// Close is waiting for the reader to let go of the socket
			// to read the peer's close frame, and CloseNow does nothing
			// once Close has begun; ending the reader's context is what
			// closes the socket under it.
			c.cancel()
			_ = c.ws.CloseNow()
			<-done
		}
		t.Stop()
		c.cancel()
	}()
}

// finishClose sends the close frame and ends the connection's context.
func (c *conn) finishClose(code websocket.StatusCode, reason string) {
	_ = c.ws.Close(code, reason)
	c.cancel()
}

// readMessage reads one text message of at most limit bytes. A larger one
// closes the connection with 1009 and the given reason, as soon as a frame
// header announces it (see frameGuard). A message over smallMessageBytes
// first reserves its bytes from the server's decode budget, waiting for
// room; the reservation lasts until the next readMessage or the
// connection's end, so it covers decoding and handling the request too.
// It is called from the connection's reader only.
func (c *conn) readMessage(ctx context.Context, limit int64, tooBig string) ([]byte, error) {
	c.releaseDecode()
	c.frames.setLimit(limit)
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, c.readFailed(err, tooBig)
	}
	start, over := c.frames.next()
	if over {
		return nil, c.tooBig(tooBig)
	}
	// A message in one frame reserves its size; one in fragments may
	// grow to the limit.
	reserve, exact := limit, start.whole && start.size >= 0
	if exact {
		if start.size > limit {
			return nil, c.tooBig(tooBig)
		}
		reserve = start.size
	}
	if reserve > smallMessageBytes {
		if err := c.srv.decode.acquire(ctx, reserve); err != nil {
			return nil, err
		}
		c.decodeHeld.Store(reserve)
	}
	var data []byte
	if exact {
		// The size is known: one allocation, no doubling copies.
		data = make([]byte, start.size)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, c.readFailed(err, tooBig)
		}
	} else {
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
		if err != nil {
			return nil, c.readFailed(err, tooBig)
		}
		if n > limit {
			return nil, c.tooBig(tooBig)
		}
		data = buf.Bytes()
	}
	c.srv.metrics.framesIn.Inc()
	if typ != websocket.MessageText {
		return nil, errBinaryFrame
	}
	return data, nil
}

// readFailed maps a failed read to errTooBig, after closing with 1009,
// when the frame guard refused the message.
func (c *conn) readFailed(err error, tooBig string) error {
	if errors.Is(err, errFrameTooBig) {
		return c.tooBig(tooBig)
	}
	return err
}

// tooBig closes the connection with 1009 and reason, and returns once the
// close frame is out: the reader's caller ends the connection next, which
// would otherwise cut the socket before the writer sent it. The close does
// not wait for the peer's bytes (the frame guard fails every read by then).
func (c *conn) tooBig(reason string) error {
	c.srv.metrics.oversize.Inc()
	c.closeAsync(protocol.CloseMessageTooBig, reason)
	<-c.ctx.Done()
	return errTooBig
}

// releaseDecode returns the decode budget the last message held.
func (c *conn) releaseDecode() {
	c.srv.decode.release(c.decodeHeld.Swap(0))
}

var (
	errTooBig      = errors.New("gateway: message too large")
	errBinaryFrame = errors.New("gateway: binary frames are not part of the protocol")
)

// respond sends a response frame. Responses are never dropped: a client that
// cannot take one is a slow consumer.
func (c *conn) respond(id string, payload any, e *protocol.ErrorShape) {
	c.send(c.encodeResponse(id, payload, e), false)
}

// respondReady answers the connect request with hello-ok and marks the
// connection ready in one step under c.mu. A broadcast checks ready before
// it takes c.mu, so it either skips the client (it began before hello-ok
// was queued) or queues behind hello-ok: the first frame a client reads is
// hello-ok, and no event broadcast after the client has read it is missed.
func (c *conn) respondReady(id string, hello any) {
	b := c.encodeResponse(id, hello, nil)
	// An authenticated connection is never evicted to make room for
	// unauthenticated ones.
	c.srv.hub.authenticated(c)
	c.mu.Lock()
	c.ready.Store(true)
	c.enqueueLocked(frame{head: b}, false)
}

// encodeResponse is a response frame's bytes.
func (c *conn) encodeResponse(id string, payload any, e *protocol.ErrorShape) []byte {
	f := protocol.OK(id, payload)
	if e != nil {
		f = protocol.Fail(id, e)
	}
	b, err := json.Marshal(f)
	if err != nil {
		c.log.Error("gateway: response could not be encoded", "id", id, "err", err)
		b, _ = json.Marshal(protocol.Fail(id, protocol.NewError(protocol.CodeUnavailable, "response could not be encoded")))
	}
	return b
}

func (c *conn) startedRun(runID string) bool {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	return c.runs[runID]
}

// addRun registers the client for a run's tool events, which go only to the
// clients that started the run and asked for tool events.
func (c *conn) addRun(runID string) {
	c.subMu.Lock()
	if c.runs == nil {
		c.runs = map[string]bool{}
	}
	if len(c.runs) >= maxRunsPerConn {
		clear(c.runs)
	}
	c.runs[runID] = true
	c.subMu.Unlock()
}

// maxRunsPerConn bounds the run ids one connection remembers.
const maxRunsPerConn = 256

func (c *conn) isSubscribed() bool {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	return c.subscribed
}

func (c *conn) setSubscribed(on bool) {
	c.subMu.Lock()
	c.subscribed = on
	c.subMu.Unlock()
}
