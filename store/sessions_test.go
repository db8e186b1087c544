package store

import (
	"reflect"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// The index survives a restart. (Round trips, order, replacing and
// deleting are in the conformance suite, store/storetest.)
func TestSessionsIndexSurvivesReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	a := core.SessionEntry{Key: "agent:main:main", AgentID: "main", SessionID: "s1", CreatedAt: 10, UpdatedAt: 100,
		LastRoute: &core.Route{Channel: "telegram", To: "123"}}
	if err := s.PutSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openStore(t, dir)
	if got, ok, err := s.GetSession(ctx, a.Key); !ok || err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("after reopen GetSession = %+v, %v, %v; want %+v", got, ok, err, a)
	}
}
