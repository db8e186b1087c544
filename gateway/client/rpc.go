package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Response is one response frame.
type Response struct {
	// ID echoes the request's id.
	ID string
	// OK reports success.
	OK bool
	// Payload is the result, or nil when the frame had none.
	Payload json.RawMessage
	// Error is the failure the server sent, if any.
	Error *protocol.ErrorShape
	// Raw is the whole frame as received.
	Raw []byte
}

// Err returns nil for a successful response and the server's
// *protocol.ErrorShape for a failed one; a failure the server sent without
// an error gets one with an empty code.
func (r Response) Err() error {
	if e := r.errorShape(); e != nil {
		return e
	}
	return nil
}

func (r Response) errorShape() *protocol.ErrorShape {
	switch {
	case r.OK:
		return nil
	case r.Error != nil:
		return r.Error
	default:
		return &protocol.ErrorShape{Message: "response ok:false without an error"}
	}
}

// Stream receives every response with one id, in arrival order: a method
// may answer more than once (agent acknowledges, then answers; openclaw-facts
// §1.3). Its queue is unbounded, which is safe because the server sends a
// handful of responses per request. Close it when done.
type Stream struct {
	c     *Client
	id    string
	ready chan struct{} // holds a token while queue may be non-empty

	mu    sync.Mutex
	queue []Response
}

// ID returns the request id the stream receives responses for.
func (s *Stream) ID() string { return s.id }

func (s *Stream) push(r Response) {
	s.mu.Lock()
	s.queue = append(s.queue, r)
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *Stream) pop() (Response, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Response{}, false
	}
	r := s.queue[0]
	s.queue[0] = Response{}
	s.queue = s.queue[1:]
	return r, true
}

// Next returns the next response, waiting for it. It fails with ctx's error,
// or with ErrClosed once the connection has ended and no response is left.
func (s *Stream) Next(ctx context.Context) (Response, error) {
	for {
		if r, ok := s.pop(); ok {
			return r, nil
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return Response{}, ctx.Err()
		case <-s.c.done:
			if r, ok := s.pop(); ok {
				return r, nil
			}
			return Response{}, s.c.closedError()
		}
	}
}

// Close stops the stream; later responses with its id are discarded.
func (s *Stream) Close() {
	s.c.mu.Lock()
	if s.c.streams[s.id] == s {
		delete(s.c.streams, s.id)
	}
	s.c.mu.Unlock()
}

// Watch starts receiving the responses with id, for requests written with
// Send (a malformed request is answered with id "invalid"). It fails if id
// is already watched. Call and CallStream use decimal ids ("1", "2", …);
// avoid those.
func (c *Client) Watch(id string) (*Stream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.streams[id]; dup {
		return nil, fmt.Errorf("gateway client: request id %q is already in use", id)
	}
	s := &Stream{c: c, id: id, ready: make(chan struct{}, 1)}
	c.streams[id] = s
	return s, nil
}

// CallStream sends a request for method with params (nil sends none) under
// a fresh id and returns the stream of its responses.
func (c *Client) CallStream(ctx context.Context, method string, params any) (*Stream, error) {
	return c.request(ctx, strconv.FormatUint(c.nextID.Add(1), 10), method, params)
}

// Call sends a request and returns the payload of the first response. A
// failed response's error is the server's *protocol.ErrorShape; any later
// response with the same id is discarded (use CallStream for methods such as
// agent that answer twice).
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s, err := c.CallStream(ctx, method, params)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r, err := s.Next(ctx)
	if err != nil {
		if !errors.Is(err, ErrClosed) {
			err = fmt.Errorf("gateway client: %s: %w", method, err)
		}
		return nil, err
	}
	return r.Payload, r.Err()
}

// request watches id, then sends the request, so no response can be missed.
func (c *Client) request(ctx context.Context, id, method string, params any) (*Stream, error) {
	f := protocol.RequestFrame{Type: protocol.TypeRequest, ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("gateway client: %s params: %w", method, err)
		}
		f.Params = raw
	}
	frame, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("gateway client: %s: %w", method, err)
	}
	s, err := c.Watch(id)
	if err != nil {
		return nil, err
	}
	if err := c.Send(ctx, frame); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Detail returns the string member key of the details of the gateway error
// in err's chain (a *protocol.ErrorShape, also inside a *ConnectError), or ""
// when there is none: for example "code", "reason", or the "requestId" of a
// PAIRING_REQUIRED rejection that an operator approves.
func Detail(err error, key string) string {
	var e *protocol.ErrorShape
	if !errors.As(err, &e) {
		return ""
	}
	m, _ := e.Details.(map[string]any)
	s, _ := m[key].(string)
	return s
}
