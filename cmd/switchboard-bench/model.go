package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"
)

// markerRE finds the message markers the load driver puts in every
// message ("#m<session>-<seq>").
var markerRE = regexp.MustCompile(`#m[0-9]+-[0-9]+`)

// modelContextWindow is the bench model's context window in tokens (the
// -context-window flag): small, it makes sessions compact their history.
var modelContextWindow = 200000

// model is an OpenAI-compatible streaming chat completions server that
// answers every request with "ack <marker>" plus filler tokens, after a
// first-token latency and at a token rate; with long, a request that asks
// for it gets a long reply in many deltas instead.
type model struct {
	srv     *httptest.Server
	latency time.Duration
	tps     float64
	tokens  int
	// tool makes every turn call a tool first: a request whose last
	// message is the user's is answered with an ls call, the request that
	// brings its result with the text.
	tool bool
	// onRequest and onDone see each request's marker (the last one in the
	// body: the newest user message) when it arrives and when its stream
	// ends.
	onRequest, onDone func(marker string, at time.Time)
	// onOther sees the body of each turn's first request that carries no
	// marker (heartbeats, cron jobs); such turns are answered HEARTBEAT_OK.
	onOther func(body []byte)
	// long, when set, answers a request whose newest message is the
	// user's and contains long.trigger with long's reply instead.
	long *longReply
}

func startModel(latency time.Duration, tps float64, tokens int, tool bool, onRequest, onDone func(string, time.Time)) *model {
	m := &model{latency: latency, tps: tps, tokens: max(tokens, 1), tool: tool, onRequest: onRequest, onDone: onDone}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	return m
}

func (m *model) close() { m.srv.Close() }

// yaml is the models.providers entry for the child's configuration.
func (m *model) yaml() string {
	return fmt.Sprintf("    fake:\n      api: openai-completions\n      baseUrl: %s/v1\n      apiKey: bench-key\n      models: [{id: bench, contextWindow: %d, maxTokens: 1024}]\n", m.srv.URL, modelContextWindow)
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	all := markerRE.FindAll(body, -1)
	marker := ""
	if len(all) > 0 {
		marker = string(all[len(all)-1])
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "the bench model wants a chat completions request with messages", http.StatusBadRequest)
		return
	}
	callTool := m.tool && req.Messages[len(req.Messages)-1].Role != "tool"
	// A turn's first request is the one measured.
	if first := !m.tool || callTool; first && marker != "" && m.onRequest != nil {
		m.onRequest(marker, time.Now())
	} else if first && marker == "" && m.onOther != nil {
		m.onOther(body)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(delta, finish string) {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
		if fl != nil {
			fl.Flush()
		}
	}
	send(`{"role":"assistant","content":""}`, "null")
	if m.latency > 0 {
		time.Sleep(m.latency)
	}
	if callTool {
		send(`{"tool_calls":[{"index":0,"id":"call_bench","type":"function","function":{"name":"ls","arguments":"{}"}}]}`, "null")
		send(`{}`, `"tool_calls"`)
		fmt.Fprint(w, "data: [DONE]\n\n")
		if fl != nil {
			fl.Flush()
		}
		return
	}
	deltas, rate := m.answer(marker), m.tps
	if last := req.Messages[len(req.Messages)-1]; m.long != nil && last.Role == "user" && bytes.Contains(last.Content, []byte(m.long.trigger)) {
		deltas, rate = m.long.deltas(), m.long.tps
	}
	// Paced against the start, so the time a write takes does not slow
	// the rate down.
	start := time.Now()
	for i, text := range deltas {
		b, _ := json.Marshal(map[string]string{"content": text})
		send(string(b), "null")
		if rate > 0 && i < len(deltas)-1 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(i+1) * float64(time.Second) / rate))))
		}
	}
	send(`{}`, `"stop"`)
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n",
		len(body)/4, len(deltas), len(body)/4+len(deltas))
	if fl != nil {
		fl.Flush()
	}
	if m.onDone != nil {
		m.onDone(marker, time.Now())
	}
}

// answer is the text deltas of an ordinary answer: "ack <marker>" (or
// HEARTBEAT_OK for a turn without one), then " ok" up to m.tokens.
func (m *model) answer(marker string) []string {
	out := make([]string, m.tokens)
	for i := range out {
		switch {
		case i == 0 && marker == "":
			out[i] = "HEARTBEAT_OK"
		case i == 0:
			out[i] = "ack " + marker
		default:
			out[i] = " ok"
		}
	}
	return out
}

// longReply is an answer of a given size streamed in many small deltas:
// the gateway mode's big reply.
type longReply struct {
	// trigger is the text that asks for it, e.g. "#long".
	trigger string
	// bytes is the reply's size and chunk the size of each delta (the last
	// may be shorter).
	bytes, chunk int
	// tps is deltas per second; 0 sends them as fast as the socket takes
	// them.
	tps float64
}

// longFiller is the reply's text, repeated: plain ASCII words, so the
// JSON on the wire is as long as the text.
const longFiller = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "

// deltas cuts a text of exactly l.bytes bytes into deltas of l.chunk.
func (l longReply) deltas() []string {
	text := strings.Repeat(longFiller, l.bytes/len(longFiller)+1)[:l.bytes]
	chunk := max(l.chunk, 1)
	out := make([]string, 0, l.bytes/chunk+1)
	for len(text) > 0 {
		n := min(chunk, len(text))
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}
