package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
)

// Spill keeps bus messages too large for a notice (PostgreSQL refuses
// NOTIFY payloads of 8,000 bytes or more); store/postgres implements it.
type Spill interface {
	// PutSpill stores payload and returns its id. One round trip.
	PutSpill(ctx context.Context, payload []byte) (int64, error)
	// Spill returns the payload stored under id. One round trip.
	Spill(ctx context.Context, id int64) ([]byte, error)
}

// relayChannel is the bus channel of the gateways' run observations.
const relayChannel = "switchboard_runs"

// maxNotice is the most a notice carries inline; larger batches are
// spilled and the notice names them.
const maxNotice = 7000

// Relay carries the gateway's run observations between instances
// (gateway.Relay): Publish queues one, a single sender batches what is
// queued into one notice (spilling it when large), and the notices of the
// other instances are handed to receive one observation at a time, in
// the order their instance published them. Safe for concurrent use.
type Relay struct {
	bus     Bus
	spill   Spill
	self    string
	receive func([]byte)
	log     *slog.Logger

	queue   chan []byte
	dropped atomic.Int64
	stop    func()
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewRelay returns the relay of member m over bus, with large messages
// kept in spill, delivering the other instances' observations to receive.
func NewRelay(m *Member, bus Bus, spill Spill, receive func([]byte)) *Relay {
	ctx, cancel := context.WithCancel(context.Background())
	return &Relay{bus: bus, spill: spill, self: m.id, receive: receive, log: m.log,
		queue: make(chan []byte, 4096), ctx: ctx, cancel: cancel}
}

// Start listens on the bus and starts the sender.
func (r *Relay) Start(ctx context.Context) error {
	stop, err := r.bus.Listen(ctx, relayChannel, r.onNotice)
	if err != nil {
		return err
	}
	r.stop = stop
	r.wg.Add(1)
	go r.send()
	return nil
}

// Publish implements gateway.Relay: it queues payload (a JSON value) and
// drops it when the queue is full.
func (r *Relay) Publish(payload []byte) {
	select {
	case r.queue <- payload:
	default:
		if r.dropped.Add(1)%100 == 1 {
			r.log.Warn("cluster: the run relay is behind; dropping observations", "dropped", r.dropped.Load())
		}
	}
}

// Stop stops listening and sending; what is queued is dropped.
func (r *Relay) Stop() {
	if r.stop != nil {
		r.stop()
	}
	r.cancel()
	r.wg.Wait()
}

// send batches the queue into notices: "<instance>\n[p1,p2,…]", or
// "<instance>\n@<spill id>" for a batch over maxNotice.
func (r *Relay) send() {
	defer r.wg.Done()
	var buf bytes.Buffer
	for {
		var first []byte
		select {
		case first = <-r.queue:
		case <-r.ctx.Done():
			return
		}
		buf.Reset()
		buf.WriteString(r.self)
		buf.WriteString("\n[")
		buf.Write(first)
	gather:
		for buf.Len() < maxNotice {
			select {
			case p := <-r.queue:
				buf.WriteByte(',')
				buf.Write(p)
			default:
				break gather
			}
		}
		buf.WriteByte(']')
		notice := buf.String()
		if len(notice) > maxNotice {
			id, err := r.spill.PutSpill(r.ctx, buf.Bytes()[len(r.self)+1:])
			if err != nil {
				r.log.Warn("cluster: cannot relay run observations", "err", err)
				continue
			}
			notice = r.self + "\n@" + strconv.FormatInt(id, 10)
		}
		if err := r.bus.Notify(r.ctx, relayChannel, notice); err != nil && r.ctx.Err() == nil {
			r.log.Warn("cluster: cannot relay run observations", "err", err)
		}
	}
}

// onNotice hands another instance's observations to receive.
func (r *Relay) onNotice(notice string) {
	from, body, ok := bytes.Cut([]byte(notice), []byte{'\n'})
	if !ok || string(from) == r.self {
		return
	}
	if len(body) > 0 && body[0] == '@' {
		id, err := strconv.ParseInt(string(body[1:]), 10, 64)
		if err != nil {
			return
		}
		if body, err = r.spill.Spill(r.ctx, id); err != nil {
			r.log.Warn("cluster: a relayed message is gone", "err", err)
			return
		}
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		r.log.Warn("cluster: unreadable relayed message", "err", err)
		return
	}
	for _, p := range batch {
		r.receive(p)
	}
}
