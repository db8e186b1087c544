package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"run", "config", "gateway", "pairing", "devices", "status"}
	for _, tc := range []struct{ got, want string }{
		{"rnu", "run"}, {"confg", "config"}, {"gatway", "gateway"}, {"Pairing", "pairing"},
		{"statsu", "status"}, {"xyzzy", ""}, {"", ""},
	} {
		if got := Closest(tc.got, names); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.got, got, tc.want)
		}
	}
}

func FuzzClosest(f *testing.F) {
	f.Add("gatway", "gateway")
	f.Fuzz(func(t *testing.T, got, cand string) {
		if s := Closest(got, []string{cand}); s != "" && s != cand {
			t.Fatalf("Closest returned %q, not a candidate", s)
		}
	})
}
