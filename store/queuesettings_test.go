package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestQueueSettings(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	if got, err := s.AllQueueSettings(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	put := func(key core.SessionKey, v string) {
		t.Helper()
		var raw json.RawMessage
		if v != "<nil>" {
			raw = json.RawMessage(v)
		}
		if err := s.PutQueueSettings(ctx, key, raw); err != nil {
			t.Fatalf("PutQueueSettings(%s, %s): %v", key, v, err)
		}
	}
	put(sessA, `{"mode":"collect","debounceMs":500}`)
	put(sessB, `{"mode":"steer"}`)
	put(sessB, `{"mode":"followup","cap":3}`) // replaces
	got, err := s.AllQueueSettings(ctx)
	want := map[core.SessionKey]json.RawMessage{
		sessA: json.RawMessage(`{"mode":"collect","debounceMs":500}`),
		sessB: json.RawMessage(`{"mode":"followup","cap":3}`),
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("AllQueueSettings = %s, %v; want %s", got, err, want)
	}

	for _, del := range []string{"<nil>", "", "null", " null\n"} {
		put(sessA, `{"mode":"interrupt"}`)
		put(sessA, del)
		if got, _ := s.AllQueueSettings(ctx); got[sessA] != nil || len(got) != 1 {
			t.Errorf("after putting %q: %s; want sessA deleted", del, got)
		}
	}
	put("agent:main:nothing-stored", "") // deleting nothing is fine

	if err := s.PutQueueSettings(ctx, sessA, json.RawMessage(`{"mode":`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid JSON: %v", err)
	}
	if err := s.PutQueueSettings(ctx, "", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "session key") {
		t.Errorf("empty key: %v", err)
	}
}
