package gateway

import (
	"bytes"
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
)

// preauthMaxBytes caps a message from a client that has not completed its
// handshake (openclaw-facts §1.2).
const preauthMaxBytes = 64 << 10

// writeTimeout bounds one frame write; a client that cannot take a frame in
// this long is gone.
const writeTimeout = 10 * time.Second

// conn is one WebSocket client. Its read loop runs on the HTTP handler's
// goroutine; a writer goroutine exists only while frames are queued, so an
// idle connection costs one goroutine.
type conn struct {
	srv      *Server
	ws       *websocket.Conn
	id       string
	ip       string
	loopback bool
	origin   string
	log      *slog.Logger
	ctx      context.Context
	cancel   context.CancelFunc

	// Set once by the handshake, before ready is stored; read-only after.
	ready     atomic.Bool
	protocol  int
	role      string
	scopes    []string
	caps      map[string]bool
	client    clientInfo
	deviceID  string
	connected time.Time
	nonce     string

	mu      sync.Mutex // guards the outbound queue
	queue   [][]byte
	queued  int64
	writing bool
	closing bool
	seq     int64 // per-connection event seq (protocol v4)

	subMu    sync.Mutex
	sessions map[core.SessionKey]bool // sessions.subscribe
	runs     map[string]bool          // runs this client started (tool events)

	inflight     sync.WaitGroup
	unauthorized int // consecutive "unauthorized role" answers
}

// clientInfo is what a client said about itself in connect.
type clientInfo struct {
	ID, Version, Platform, Mode, DisplayName, DeviceFamily, InstanceID string
}

// maxBuffered is the client's outbound byte budget.
func (c *conn) maxBuffered() int64 { return c.srv.cfg.Policy.MaxBufferedBytes }

// send queues a frame without blocking. A frame that does not fit the
// client's buffer is dropped if droppable; otherwise the client is a slow
// consumer and is disconnected (openclaw-facts §1.9). It reports whether the
// frame was queued.
func (c *conn) send(frame []byte, droppable bool) bool {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return false
	}
	if c.queued+int64(len(frame)) > c.maxBuffered() {
		if droppable {
			c.mu.Unlock()
			c.srv.metrics.droppedEvents.Inc()
			return false
		}
		c.closing = true
		c.mu.Unlock()
		c.srv.metrics.slowConsumers.Inc()
		c.log.Warn("closing a slow consumer", "conn", c.id, "queuedBytes", c.queued)
		go c.closeWith(websocket.StatusPolicyViolation, "slow consumer")
		return false
	}
	c.queue = append(c.queue, frame)
	c.queued += int64(len(frame))
	if !c.writing {
		c.writing = true
		c.srv.connWG.Add(1)
		go c.writeLoop()
	}
	c.mu.Unlock()
	return true
}

// writeLoop writes queued frames in order and exits when the queue is
// empty.
func (c *conn) writeLoop() {
	defer c.srv.connWG.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.closing && c.ctx.Err() != nil {
			c.writing = false
			c.mu.Unlock()
			return
		}
		f := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()

		ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
		err := c.ws.Write(ctx, websocket.MessageText, f)
		cancel()
		c.mu.Lock()
		c.queued -= int64(len(f))
		c.mu.Unlock()
		if err != nil {
			c.cancel()
			c.mu.Lock()
			c.writing = false
			c.queue, c.queued = nil, 0
			c.mu.Unlock()
			return
		}
		c.srv.metrics.framesOut.Inc()
	}
}

// closeWith closes the connection with a code and reason, once.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	_ = c.ws.Close(code, reason)
	c.cancel()
}

// readMessage reads one text message of at most limit bytes. A larger one
// closes the connection with 1009 and the given reason.
func (c *conn) readMessage(ctx context.Context, limit int64, tooBig string) ([]byte, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		c.closeWith(websocket.StatusMessageTooBig, tooBig)
		return nil, errTooBig
	}
	if typ != websocket.MessageText {
		return nil, errBinaryFrame
	}
	c.srv.metrics.framesIn.Inc()
	return buf.Bytes(), nil
}

var (
	errTooBig      = errors.New("gateway: message too large")
	errBinaryFrame = errors.New("gateway: binary frames are not part of the protocol")
)

// respond sends a response frame.
func (c *conn) respond(id string, payload any, e *errorShape) {
	f := responseFrame{Type: "res", ID: id, OK: e == nil, Payload: payload, Error: e}
	if e != nil {
		f.Payload = nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		b, _ = json.Marshal(responseFrame{Type: "res", ID: id, Error: &errorShape{Code: "UNAVAILABLE", Message: "response could not be encoded"}})
	}
	c.send(b, false)
}

// nextSeq returns this connection's next event seq.
func (c *conn) nextSeq() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	return c.seq
}

func (c *conn) subscribedTo(key core.SessionKey) bool {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	return c.sessions[key]
}

func (c *conn) startedRun(runID string) bool {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	return c.runs[runID]
}

func (c *conn) addRun(runID string) {
	c.subMu.Lock()
	if c.runs == nil {
		c.runs = map[string]bool{}
	}
	c.runs[runID] = true
	c.subMu.Unlock()
}
