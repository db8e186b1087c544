package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestSessionsIndexRoundTripAndOrder(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)

	if _, ok, err := s.GetSession(ctx, "agent:main:main"); ok || err != nil {
		t.Fatalf("empty index: ok=%v err=%v", ok, err)
	}
	a := core.SessionEntry{
		Key: "agent:main:main", AgentID: "main", SessionID: "s1", CreatedAt: 10, UpdatedAt: 100,
		Usage:     core.Usage{Input: 5, Output: 7, TotalTokens: 12, Cost: core.Cost{Total: 0.5}},
		Model:     "echo/echo",
		LastRoute: &core.Route{Channel: "telegram", To: "123"},
	}
	b := core.SessionEntry{Key: "agent:main:telegram:group:-1", AgentID: "main", SessionID: "s2", CreatedAt: 20, UpdatedAt: 200}
	for _, e := range []core.SessionEntry{a, b} {
		if err := s.PutSession(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.GetSession(ctx, a.Key)
	if err != nil || !ok || !reflect.DeepEqual(got, a) {
		t.Fatalf("GetSession = %+v %v %v, want %+v", got, ok, err, a)
	}
	list, err := s.ListSessions(ctx, 0)
	if err != nil || len(list) != 2 || list[0].Key != b.Key || list[1].Key != a.Key {
		t.Fatalf("ListSessions = %+v %v; want b then a (most recent first)", list, err)
	}
	if list, _ := s.ListSessions(ctx, 1); len(list) != 1 || list[0].Key != b.Key {
		t.Errorf("ListSessions(1) = %+v", list)
	}

	// Replacing keeps one row per key; the index survives a restart.
	a.SessionID, a.UpdatedAt, a.AbortedLastRun = "s3", 300, true
	if err := s.PutSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openStore(t, dir)
	if got, _, _ := s.GetSession(ctx, a.Key); !reflect.DeepEqual(got, a) {
		t.Errorf("after reopen GetSession = %+v, want %+v", got, a)
	}
	if list, _ := s.ListSessions(ctx, 0); len(list) != 2 || list[0].Key != a.Key {
		t.Errorf("after update, ListSessions = %+v; want a first", list)
	}

	if err := s.DeleteSession(ctx, a.Key); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.GetSession(ctx, a.Key); ok {
		t.Errorf("entry still present after DeleteSession")
	}
}

func TestPutSessionRequiresKeyAndSessionID(t *testing.T) {
	s := openStore(t, t.TempDir())
	err := s.PutSession(t.Context(), core.SessionEntry{Key: "agent:main:main"})
	if err == nil || !strings.Contains(err.Error(), "sessionId") {
		t.Errorf("PutSession without a session id: %v", err)
	}
}
