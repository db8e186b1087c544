package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// footprintResult is what footprint measures.
type footprintResult struct {
	Date        string `json:"date"`
	BinaryBytes int64  `json:"binaryBytes"`
	// ReadyMs is exec → /readyz on a fresh state directory (the store's
	// schema created); WarmReadyMs on the state the first run left, as a
	// restart finds it.
	ReadyMs     float64 `json:"execToReadyMs"`
	WarmReadyMs float64 `json:"warmExecToReadyMs"`
	Bridges     string  `json:"bridges"`
	IdleSeconds float64 `json:"idleSeconds"`
	Idle        memory  `json:"idle"`
	Conns       int     `json:"gatewayConnections"`
	ConnsOpened int     `json:"gatewayConnectionsOpened"`
	WithConns   memory  `json:"withConnections"`
	// Settled is the RSS with the connections open after another idle
	// period (the connect storm\'s garbage collected).
	Settled     memory  `json:"withConnectionsSettled"`
	ConnectSecs float64 `json:"connectSeconds"`
	// PlatformErrors counts problems the platform fakes reported (a
	// request they did not understand): 0 in a valid run.
	PlatformErrors int64 `json:"platformErrors"`
}

func footprint(ctx context.Context, o options, log io.Writer) (*footprintResult, error) {
	r, err := startRig(ctx, o, log, rigSpec{modelYAML: echoModel})
	if err != nil {
		return nil, err
	}
	defer r.close(log, o.keep)
	st, err := os.Stat(r.bin)
	if err != nil {
		return nil, err
	}
	p, port, token, ready := r.p, r.port, r.token, r.ready
	res := &footprintResult{
		Date: time.Now().UTC().Format(time.RFC3339), BinaryBytes: st.Size(),
		ReadyMs: float64(ready.Microseconds()) / 1000, Bridges: "telegram, slack (socket mode), discord, whatsapp (configured, no linked device); gateway on",
		IdleSeconds: o.idle.Seconds(), Conns: o.conns,
	}
	if err := r.c.stop(30 * time.Second); err != nil {
		return nil, fmt.Errorf("stopping the first run: %w", err)
	}
	warm, err := r.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting again on the same state: %w", err)
	}
	res.WarmReadyMs = float64(warm.Microseconds()) / 1000
	c := r.c
	select {
	case <-time.After(o.idle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if res.Idle, err = readMemory(c.cmd.Process.Pid); err != nil {
		return nil, err
	}
	if o.conns > 0 {
		start := time.Now()
		clients, err := openConns(ctx, fmt.Sprintf("ws://127.0.0.1:%d/", port), token, o.conns, log)
		res.ConnsOpened = len(clients)
		res.ConnectSecs = time.Since(start).Seconds()
		defer func() {
			for _, cl := range clients {
				cl.Close()
			}
		}()
		if err != nil {
			return nil, fmt.Errorf("opened %d of %d gateway connections: %w", len(clients), o.conns, err)
		}
		if res.WithConns, err = readMemory(c.cmd.Process.Pid); err != nil {
			return nil, err
		}
		select {
		case <-time.After(o.idle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if res.Settled, err = readMemory(c.cmd.Process.Pid); err != nil {
			return nil, err
		}
	}
	res.PlatformErrors = p.host.Errors()
	return res, nil
}

// openConns opens n authenticated operator connections, 16 at a time:
// the gateway allows 32 unauthenticated sockets per address.
func openConns(ctx context.Context, url, token string, n int, log io.Writer) ([]*client.Client, error) {
	start := time.Now()
	var (
		mu      sync.Mutex
		clients []*client.Client
		first   error
		wg      sync.WaitGroup
	)
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			// Events are not read: a buffer of one keeps the bench small (the
			// client drops what does not fit and keeps reading).
			cl, err := client.Dial(dctx, client.Options{URL: url, Token: token, Scopes: []string{protocol.ScopeRead}, EventBuffer: 1})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			clients = append(clients, cl)
			if len(clients)%1000 == 0 {
				fmt.Fprintf(log, "footprint: %d gateway connections open after %.1f s\n", len(clients), time.Since(start).Seconds())
			}
		}()
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
	}
	wg.Wait()
	return clients, first
}

// ok: footprint measures; only platform errors fail it.
func (r *footprintResult) ok() bool { return r.PlatformErrors == 0 }

func (r *footprintResult) failure() error {
	return fmt.Errorf("FAILED: %d platform errors", r.PlatformErrors)
}

// table prints the result for people.
func (r *footprintResult) table(w io.Writer) {
	mb := func(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
	rows := [][2]string{
		{"binary size", fmt.Sprintf("%.1f MB", float64(r.BinaryBytes)/(1<<20))},
		{"exec → /readyz 200", fmt.Sprintf("%.1f ms fresh state, %.1f ms restart", r.ReadyMs, r.WarmReadyMs)},
		{"configured", r.Bridges},
		{fmt.Sprintf("idle RSS after %.0f s (peak)", r.IdleSeconds), mb(r.Idle.RSSKB) + " (" + mb(r.Idle.PeakRSSKB) + "), " + fmt.Sprint(r.Idle.Threads) + " threads"},
		{"… of which anonymous / file-backed", mb(r.Idle.AnonKB) + " / " + mb(r.Idle.FileKB) + " (the binary's pages)"},
	}
	if r.Conns > 0 {
		rows = append(rows, [2]string{fmt.Sprintf("RSS with %d idle gateway connections (peak)", r.ConnsOpened),
			mb(r.WithConns.RSSKB) + " (" + mb(r.WithConns.PeakRSSKB) + "), opened in " + fmt.Sprintf("%.1f s", r.ConnectSecs)},
			[2]string{fmt.Sprintf("… %.0f s later", r.IdleSeconds), mb(r.Settled.RSSKB) + fmt.Sprintf(" (%.1f KB per connection over idle)",
				float64(r.Settled.RSSKB-r.Idle.RSSKB)/float64(max(r.ConnsOpened, 1)))})
	}
	width := 0
	for _, row := range rows {
		width = max(width, len([]rune(row[0])))
	}
	for _, row := range rows {
		fmt.Fprintf(w, "%s%s  %s\n", row[0], strings.Repeat(" ", width-len([]rune(row[0]))), row[1])
	}
}
