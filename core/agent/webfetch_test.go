package agent_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/egress"
)

// The model fetches a page with web_fetch and answers from its readable
// text; the egress client lets exactly the test server's address through,
// so the loopback canary of the same host stays refused.
func TestWebFetchToolEndToEnd(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>Release notes</title><script>evil()</script></head>` +
			`<body><nav>menu</nav><main><h1>v2.4</h1><p>Ships on <b>Friday</b>.</p></main></body></html>`))
	}))
	t.Cleanup(page.Close)
	canary := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("the canary was reached")
	}))
	t.Cleanup(canary.Close)
	ap := netip.MustParseAddrPort(page.Listener.Addr().String())
	fetch := &tools.WebFetch{Client: egress.New(egress.Options{AllowAddr: func(a netip.AddrPort) bool { return a == ap }})}
	h := newHarness(t, harnessOptions{tools: []tools.Tool{fetch}, script: []llmtest.Response{
		llmtest.ToolCalls(llmtest.Call("web_fetch", `{"url":"`+page.URL+`/notes"}`)),
		llmtest.ToolCalls(llmtest.Call("web_fetch", `{"url":"`+canary.URL+`/"}`)),
		llmtest.Text("v2.4 ships on Friday."),
	}})
	res := h.run(dm("when does 2.4 ship?"), nil)
	if len(res.Replies) != 1 || res.Replies[0].Text != "v2.4 ships on Friday." {
		t.Fatalf("replies = %+v", res.Replies)
	}
	reqs := h.server.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	first, second := string(reqs[1].Body), string(reqs[2].Body)
	if !strings.Contains(first, "Ships on Friday.") || strings.Contains(first, "evil()") {
		t.Errorf("the page the model saw: %s", first)
	}
	if !strings.Contains(second, "refused by the configured address policy") {
		t.Errorf("the canary fetch was not refused: %s", second)
	}
}
