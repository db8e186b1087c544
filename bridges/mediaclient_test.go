package bridges_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
)

// By default a bridge fetches outbound media (URLs the model may choose)
// through the egress client: a loopback or metadata address is refused
// before any connection is made.
func TestMediaClientRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int64
	canary := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer canary.Close()
	client := bridges.MediaClient(nil, 0)
	for _, ref := range []string{canary.URL + "/secret.png", "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/x.png"} {
		_, err := bridges.OpenMedia(t.Context(), client, t.TempDir(), ref, 0)
		if err == nil || !(strings.Contains(err.Error(), "loopback") || strings.Contains(err.Error(), "link-local")) {
			t.Errorf("%s: %v, want a refusal naming the address class", ref, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the canary saw %d requests", n)
	}
	own := &http.Client{}
	if got := bridges.MediaClient(own, 0); got != own {
		t.Error("an explicit client was replaced")
	}
}
