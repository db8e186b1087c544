package store

import (
	"strconv"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// BenchmarkTurnBookkeeping is what a turn of a cold session asks of the
// store besides the journal: read its index entry, write it back, check
// and record the reply in the outbound ledger.
func BenchmarkTurnBookkeeping(b *testing.B) {
	s := openBenchStore(b)
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key := core.SessionKey("agent:main:telegram:direct:" + strconv.Itoa(i%1000))
		e, ok, err := s.GetSession(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			e = core.SessionEntry{Key: key, SessionID: "s" + strconv.Itoa(i%1000), CreatedAt: 1}
		}
		e.UpdatedAt = int64(i)
		if err := s.PutSession(ctx, e); err != nil {
			b.Fatal(err)
		}
		out := "telegram|default|" + strconv.Itoa(i) + "|0"
		if _, sent, err := s.Sent(ctx, out); err != nil || sent {
			b.Fatal(sent, err)
		}
		if err := s.Record(ctx, out, strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
