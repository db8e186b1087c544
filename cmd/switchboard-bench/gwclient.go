package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// gwClient is one gateway connection of the gateway mode that reads as a
// web chat page does: every frame as soon as it arrives, every event's
// payload decoded. It counts the bytes it reads off the socket and the
// frames it decodes, and wakes whoever waits for a run's end.
type gwClient struct {
	c *client.Client
	// wire is every byte read from the TCP connection (HTTP upgrade,
	// WebSocket framing and all), frames the responses and events decoded.
	wire, frames atomic.Int64
	done         chan struct{} // closed when the event loop has exited

	mu      sync.Mutex
	waiting map[string]chan string // run id → its terminal chat state
	watch   string                 // the run followed in runSeen
	seen    runSeen
}

// runSeen is what one client saw of the watched run.
type runSeen struct {
	chat, agent int // events of the run
	final       bool
	finalText   int    // bytes of the final's text
	endState    string // final, aborted or error; "" before the end
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// gatewayEvent is what a client decodes of a chat or agent event: what a
// chat page reads to render the reply (the text), and what it follows a
// run by.
type gatewayEvent struct {
	RunID   string `json:"runId"`
	State   string `json:"state"`
	Stream  string `json:"stream"`
	Message *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
	DeltaText string `json:"deltaText"`
	Data      struct {
		Text  string `json:"text"`
		Delta string `json:"delta"`
	} `json:"data"`
}

// dialGateway opens an operator connection with scopes read and write.
func dialGateway(ctx context.Context, url, token string) (*gwClient, error) {
	g := &gwClient{done: make(chan struct{}), waiting: map[string]chan string{}}
	d := &net.Dialer{}
	// A transport of its own, so its connection's bytes are this client's.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, n: &g.wire}, nil
	}}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := client.Dial(dctx, client.Options{
		URL: url, Token: token, HTTPClient: &http.Client{Transport: tr},
		Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite},
		// Never full while the loop keeps up: a dropped event would be a
		// frame the bench read but did not decode.
		EventBuffer: 1 << 14,
	})
	if err != nil {
		return nil, err
	}
	g.c = c
	go g.loop()
	return g, nil
}

// loop decodes every event and wakes the waiters of the runs that end.
func (g *gwClient) loop() {
	defer close(g.done)
	for ev := range g.c.Events() {
		g.frames.Add(1)
		if ev.Name != "chat" && ev.Name != "agent" {
			continue
		}
		var p gatewayEvent
		if json.Unmarshal(ev.Payload, &p) != nil || p.RunID == "" {
			continue
		}
		terminal := ev.Name == "chat" && p.State != "" && p.State != "delta"
		g.mu.Lock()
		if p.RunID == g.watch {
			if ev.Name == "chat" {
				g.seen.chat++
			} else {
				g.seen.agent++
			}
			if terminal {
				g.seen.endState = p.State
				if p.State == "final" {
					g.seen.final = true
					if p.Message != nil {
						for _, c := range p.Message.Content {
							g.seen.finalText += len(c.Text)
						}
					}
				}
			}
		}
		var ch chan string
		if terminal {
			ch = g.waiting[p.RunID]
			delete(g.waiting, p.RunID)
		}
		g.mu.Unlock()
		if ch != nil {
			ch <- p.State
		}
	}
}

// expect returns a channel that receives runID's terminal chat state
// (final, aborted or error). Call it before the request that starts the run.
func (g *gwClient) expect(runID string) <-chan string {
	ch := make(chan string, 1)
	g.mu.Lock()
	g.waiting[runID] = ch
	g.mu.Unlock()
	return ch
}

// forget drops a waiter that gave up.
func (g *gwClient) forget(runID string) {
	g.mu.Lock()
	delete(g.waiting, runID)
	g.mu.Unlock()
}

// follow makes runSeen count runID's events, from zero.
func (g *gwClient) follow(runID string) {
	g.mu.Lock()
	g.watch, g.seen = runID, runSeen{}
	g.mu.Unlock()
}

// followed returns what the client saw of the followed run so far.
func (g *gwClient) followed() runSeen {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen
}

// call sends a request and returns its response's payload, counting the
// response as a frame.
func (g *gwClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s, err := g.c.CallStream(ctx, method, params)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r, err := s.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	g.frames.Add(1)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return r.Payload, nil
}

// counts returns the bytes and frames read so far.
func (g *gwClient) counts() (wire, frames int64) { return g.wire.Load(), g.frames.Load() }

// connected reports whether the connection is still open.
func (g *gwClient) connected() bool {
	select {
	case <-g.c.Closed():
		return false
	default:
		return true
	}
}

// close ends the connection and waits for the event loop.
func (g *gwClient) close() {
	g.c.Close()
	<-g.done
}

// dialGateways opens n clients, 16 at a time (the gateway admits 32
// unauthenticated sockets per address), and closes them all if one fails.
func dialGateways(ctx context.Context, url, token string, n int) ([]*gwClient, error) {
	out := make([]*gwClient, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = dialGateway(ctx, url, token)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			closeGateways(out)
			return nil, fmt.Errorf("gateway client %d of %d: %w", i+1, n, err)
		}
	}
	return out, nil
}

// closeGateways closes every client that was opened, in parallel (a close
// waits for the server's acknowledgement).
func closeGateways(cs []*gwClient) {
	var wg sync.WaitGroup
	for _, c := range cs {
		if c != nil {
			wg.Add(1)
			go func() { defer wg.Done(); c.close() }()
		}
	}
	wg.Wait()
}
