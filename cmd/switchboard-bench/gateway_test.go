package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tail := " S 1 2 3 0 -1 4194560 7873 64369 0 0 %s 0 0 20 0 1 0 1142586 5124096 968"
	for name, tc := range map[string]struct {
		stat string
		want time.Duration
		bad  bool
	}{
		"plain":                  {stat: "42 (switchboard)" + strings.Replace(tail, "%s", "250 130", 1), want: 3800 * time.Millisecond},
		"name with spaces and )": {stat: "42 (a ) b (c))" + strings.Replace(tail, "%s", "1 2", 1), want: 30 * time.Millisecond},
		"no name":                {stat: "42 switchboard S 1 2", bad: true},
		"too short":              {stat: "42 (x) S 1 2 3", bad: true},
		"not a number":           {stat: "42 (x)" + strings.Replace(tail, "%s", "x 2", 1), bad: true},
	} {
		got, err := parseProcStat(tc.stat)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("%s: %v, %v; want %v (error: %v)", name, got, err, tc.want, tc.bad)
		}
	}
}

func TestReadCPUOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc")
	}
	if _, err := readCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

// The long reply is exactly its size, in deltas of the chunk size but the
// last, and the bench model streams it for a message with the trigger
// only.
func TestModelStreamsTheLongReply(t *testing.T) {
	l := longReply{trigger: "#long", bytes: 1000, chunk: 64}
	d := l.deltas()
	if len(d) != 16 || len(strings.Join(d, "")) != 1000 || len(d[0]) != 64 || len(d[15]) != 1000-15*64 {
		t.Fatalf("%d deltas, %d bytes", len(d), len(strings.Join(d, "")))
	}
	m := startModel(0, 0, 3, false, nil, nil)
	m.long = &l
	defer m.close()
	stream := func(text string) (deltas int, content string) {
		body, _ := json.Marshal(map[string]any{"model": "bench", "stream": true,
			"messages": []map[string]any{{"role": "user", "content": text}}})
		resp, err := http.Post(m.srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				deltas++
				content += c.Choices[0].Delta.Content
			}
		}
		return deltas, content
	}
	if n, text := stream("please #long"); n != 16 || text != strings.Join(d, "") {
		t.Fatalf("long: %d deltas, %d bytes", n, len(text))
	}
	if n, text := stream("question #m1-2"); n != 3 || text != "ack #m1-2 ok ok" {
		t.Fatalf("ordinary: %d deltas, %q", n, text)
	}
}

func TestMedians(t *testing.T) {
	if median([]int64{5, 1, 3, 9}) != 5 || median(nil) != 0 {
		t.Fatal("median")
	}
	rounds := func(v ...float64) []fanoutRound {
		var out []fanoutRound
		for _, x := range v {
			out = append(out, fanoutRound{PerSecond: x})
		}
		return out
	}
	if medianRate(rounds(30, 10, 20)) != 20 || medianRate(rounds(40, 10, 20, 30)) != 25 || medianRate(nil) != 0 {
		t.Fatal("medianRate")
	}
}

// The verdicts: the fan-out fails on a ratio under 90% or a message not
// answered; the long reply on a disconnect, more than 30× the reply to
// one client, a client without the final, or a short final.
func TestGatewayVerdict(t *testing.T) {
	round := fanoutRound{Clients: 3, Sent: 10, Finals: 10}
	good := gatewayResult{
		Sessions: 3, MinRatio: minFanoutRatio, Ratio: 0.9,
		PerClient: []fanoutRound{round}, OneClient: []fanoutRound{round},
		Long: longRun{ReplyBytes: 100, MaxFactor: maxReplyFactor, Clients: []longClient{
			{Role: roleSender, Connected: true, Final: true, FinalText: 100, Factor: 30},
			{Role: roleSubscriber, Connected: true, Final: true, FinalText: 100, Factor: 12},
			{Role: roleViewer, Connected: true, Final: true, FinalText: 100, Factor: 3},
		}},
	}
	if !good.ok() {
		t.Fatalf("a run within the marks failed: %v", good.failure())
	}
	for name, bad := range map[string]func(r *gatewayResult){
		"ratio under 90%":      func(r *gatewayResult) { r.Ratio = 0.89 },
		"no rounds":            func(r *gatewayResult) { r.OneClient = nil },
		"a message lost":       func(r *gatewayResult) { r.PerClient = []fanoutRound{{Sent: 10, Finals: 9, Lost: 1}} },
		"a run failed":         func(r *gatewayResult) { r.OneClient = []fanoutRound{{Sent: 10, Finals: 9, Failed: 1}} },
		"a fan-out disconnect": func(r *gatewayResult) { r.OneClient = []fanoutRound{{Sent: 10, Finals: 10, Disconnected: 1}} },
		"over 30×":             func(r *gatewayResult) { r.Long.Clients[2].Factor = 30.1 },
		"viewer disconnected":  func(r *gatewayResult) { r.Long.Clients[2].Connected = false },
		"viewer no final":      func(r *gatewayResult) { r.Long.Clients[2].Final = false },
		"viewer short final":   func(r *gatewayResult) { r.Long.Clients[2].FinalText = 50 },
		"subscriber no final":  func(r *gatewayResult) { r.Long.Clients[1].Final = false },
		"sender no final":      func(r *gatewayResult) { r.Long.Clients[0].Final = false },
		"short final":          func(r *gatewayResult) { r.Long.Clients[0].FinalText = 99 },
		"long reply error":     func(r *gatewayResult) { r.Long.Error = "x" },
	} {
		r := good
		r.Long.Clients = append([]longClient(nil), good.Long.Clients...)
		bad(&r)
		if r.ok() {
			t.Errorf("%s: passed", name)
		}
	}
}

// A short gateway run against a real binary: both fan-out shapes answer
// every message, the long reply reaches the sender whole, and the exit
// status agrees with the verdict (the marks themselves are the bench's to
// report, not this test's).
func TestGatewayModeMeasuresARealChild(t *testing.T) {
	bin := testBinary(t)
	jsonPath := filepath.Join(t.TempDir(), "gateway.json")
	var out, errb bytes.Buffer
	code := run([]string{"-mode", "gateway", "-bin", bin, "-sessions", "3", "-messages", "2", "-rounds", "1", "-tokens", "5",
		"-reply-clients", "3", "-reply-bytes", "4096", "-reply-chunk", "256", "-reply-tps", "0", "-json", jsonPath}, &out, &errb)
	var res gatewayResult
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("exit %d, json: %v %s\n%s%s", code, err, b, out.String(), errb.String())
	}
	if (code == 0) != res.ok() || (code != 0 && code != 1) {
		t.Fatalf("exit %d for a verdict of %v\n%s", code, res.ok(), errb.String())
	}
	if len(res.PerClient) != 1 || len(res.OneClient) != 1 || res.Ratio <= 0 {
		t.Fatalf("rounds: %+v %+v", res.PerClient, res.OneClient)
	}
	for _, fr := range append(res.PerClient, res.OneClient...) {
		if fr.Sent != 6 || fr.Finals != 6 || fr.FramesPerClient == 0 || fr.BytesPerClient == 0 || fr.CPUMsPerMessage < 0 {
			t.Fatalf("round: %+v", fr)
		}
	}
	if res.PerClient[0].Clients != 3 || res.OneClient[0].Clients != 1 {
		t.Fatalf("clients: %d, %d", res.PerClient[0].Clients, res.OneClient[0].Clients)
	}
	l := res.Long
	if l.Error != "" || len(l.Clients) != 3 || l.Clients[0].Role != roleSender || l.Clients[1].Role != roleSubscriber || l.Clients[2].Role != roleViewer {
		t.Fatalf("long reply: %+v", l)
	}
	for i, c := range l.Clients {
		if !c.Final || c.FinalText != 4096 || c.Bytes < 4096 || !c.Connected {
			t.Fatalf("long reply, client %d: %+v", i, c)
		}
	}
	if !strings.Contains(out.String(), "A / B (medians)") || !strings.Contains(out.String(), "long reply verdict") {
		t.Fatalf("table:\n%s", out.String())
	}
}
