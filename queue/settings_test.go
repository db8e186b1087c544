package queue

import (
	"encoding/json"
	"testing"
	"time"
)

func pointerTo[T any](v T) *T { return &v }

func TestResolveDefaults(t *testing.T) {
	want := Settings{Mode: ModeCollect, Debounce: time.Second, Cap: 20, Drop: DropSummarize}
	if got := Resolve(Override{}, Override{}, Config{}, "telegram"); got != want {
		t.Errorf("zero Config: %+v, want %+v", got, want)
	}
	if got := Resolve(Override{}, Override{}, DefaultConfig(), ""); got != want {
		t.Errorf("DefaultConfig: %+v, want %+v", got, want)
	}
}

func TestResolvePrecedence(t *testing.T) {
	cfg := Config{
		Mode:                ModeFollowup,
		ByChannel:           map[string]Mode{"telegram": ModeInterrupt, "slack": "coalesce"},
		DebounceMs:          pointerTo(3000),
		DebounceMsByChannel: map[string]int{"telegram": 250, "discord": 0},
		Cap:                 7,
		Drop:                DropOld,
	}
	session := Override{Mode: pointerTo(ModeSteer), DebounceMs: pointerTo(4000), Cap: pointerTo(9), Drop: pointerTo(DropNew)}
	inline := Override{Mode: pointerTo(ModeSteerBacklog), DebounceMs: pointerTo(5000), Cap: pointerTo(11), Drop: pointerTo(DropSummarize)}

	cases := []struct {
		name            string
		inline, session Override
		cfg             Config
		channel         string
		want            Settings
	}{
		{"inline wins over all", inline, session, cfg, "telegram",
			Settings{ModeSteerBacklog, 5 * time.Second, 11, DropSummarize}},
		{"session wins over config", Override{}, session, cfg, "telegram",
			Settings{ModeSteer, 4 * time.Second, 9, DropNew}},
		{"channel wins over global", Override{}, Override{}, cfg, "telegram",
			Settings{ModeInterrupt, 250 * time.Millisecond, 7, DropOld}},
		{"channel mode alias", Override{}, Override{}, cfg, "slack",
			Settings{ModeCollect, 3 * time.Second, 7, DropOld}},
		{"channel matched case-insensitively", Override{}, Override{}, cfg, " Telegram ",
			Settings{ModeInterrupt, 250 * time.Millisecond, 7, DropOld}},
		{"explicit channel debounce 0 wins over global", Override{}, Override{}, cfg, "discord",
			Settings{ModeFollowup, 0, 7, DropOld}},
		{"global config for other channels", Override{}, Override{}, cfg, "whatsapp",
			Settings{ModeFollowup, 3 * time.Second, 7, DropOld}},
		{"no channel skips the per-channel maps", Override{}, Override{}, cfg, "",
			Settings{ModeFollowup, 3 * time.Second, 7, DropOld}},
		{"each field falls through on its own", Override{Cap: pointerTo(2)}, Override{Drop: pointerTo(DropNew)}, cfg, "telegram",
			Settings{ModeInterrupt, 250 * time.Millisecond, 2, DropNew}},
		{"inline debounce 0 wins over session", Override{DebounceMs: pointerTo(0)}, Override{DebounceMs: pointerTo(800)}, cfg, "telegram",
			Settings{ModeInterrupt, 0, 7, DropOld}},
		{"session debounce 0 wins over channel", Override{}, Override{DebounceMs: pointerTo(0)}, cfg, "telegram",
			Settings{ModeInterrupt, 0, 7, DropOld}},
		{"explicit global debounce 0", Override{}, Override{}, Config{DebounceMs: pointerTo(0)}, "telegram",
			Settings{ModeCollect, 0, 20, DropSummarize}},
		{"unknown session mode falls through", Override{}, Override{Mode: pointerTo(Mode("bogus"))}, cfg, "whatsapp",
			Settings{ModeFollowup, 3 * time.Second, 7, DropOld}},
		{"session alias is canonical", Override{}, Override{Mode: pointerTo(Mode("abort"))}, Config{}, "",
			Settings{ModeInterrupt, time.Second, 20, DropSummarize}},
		{"unknown drop falls through", Override{Drop: pointerTo(DropPolicy("maybe"))}, Override{}, cfg, "",
			Settings{ModeFollowup, 3 * time.Second, 7, DropOld}},
		{"config drop alias", Override{}, Override{}, Config{Drop: "newest"}, "",
			Settings{ModeCollect, time.Second, 20, DropNew}},
		{"empty channel mode falls through", Override{}, Override{}, Config{ByChannel: map[string]Mode{"telegram": ""}, Mode: ModeSteer}, "telegram",
			Settings{ModeSteer, time.Second, 20, DropSummarize}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Resolve(tc.inline, tc.session, tc.cfg, tc.channel); got != tc.want {
				t.Errorf("Resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestResolveClamps(t *testing.T) {
	cases := []struct {
		name         string
		inline       Override
		cfg          Config
		wantDebounce time.Duration
		wantCap      int
	}{
		{"negative inline debounce", Override{DebounceMs: pointerTo(-5)}, Config{}, 0, 20},
		{"negative config debounce", Override{}, Config{DebounceMs: pointerTo(-1)}, 0, 20},
		{"negative channel debounce", Override{}, Config{DebounceMsByChannel: map[string]int{"telegram": -10}}, 0, 20},
		{"inline cap 0", Override{Cap: pointerTo(0)}, Config{}, time.Second, 1},
		{"inline cap negative", Override{Cap: pointerTo(-4)}, Config{}, time.Second, 1},
		{"config cap negative", Override{}, Config{Cap: -3}, time.Second, 1},
		{"config cap 0 is unset", Override{}, Config{Cap: 0}, time.Second, 20},
		{"cap 1 stays", Override{Cap: pointerTo(1)}, Config{}, time.Second, 1},
		{"huge debounce saturates", Override{DebounceMs: pointerTo(int(^uint(0) >> 1))}, Config{}, time.Duration(maxDebounceMs) * time.Millisecond, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve(tc.inline, Override{}, tc.cfg, "telegram")
			if got.Debounce != tc.wantDebounce || got.Cap != tc.wantCap {
				t.Errorf("debounce %v cap %d, want %v and %d", got.Debounce, got.Cap, tc.wantDebounce, tc.wantCap)
			}
			if got.Debounce < 0 {
				t.Error("negative debounce")
			}
		})
	}
}

func TestOverrideJSON(t *testing.T) {
	raw, err := json.Marshal(Override{})
	if err != nil || string(raw) != "{}" {
		t.Errorf("empty override = %s, %v", raw, err)
	}
	o := Override{Mode: pointerTo(ModeCollect), DebounceMs: pointerTo(0), Cap: pointerTo(5), Drop: pointerTo(DropOld)}
	raw, err = json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"mode":"collect","debounceMs":0,"cap":5,"drop":"old"}`; string(raw) != want {
		t.Errorf("Marshal = %s, want %s", raw, want)
	}
	var back Override
	if err := json.Unmarshal([]byte(`{"mode":"coalesce","debounceMs":0,"drop":"oldest"}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.Mode == nil || *back.Mode != ModeCollect || back.DebounceMs == nil || *back.DebounceMs != 0 ||
		back.Cap != nil || back.Drop == nil || *back.Drop != DropOld {
		t.Errorf("Unmarshal = %+v", back)
	}
	if err := json.Unmarshal([]byte(`{"mode":"bogus"}`), &back); err == nil {
		t.Error("an unknown stored mode should not decode")
	}
	if !(Override{}).IsZero() || o.IsZero() || (Override{DebounceMs: pointerTo(0)}).IsZero() {
		t.Error("IsZero is wrong")
	}
}
