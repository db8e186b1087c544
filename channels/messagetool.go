package channels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/queue"
)

// messageToolSchema is the message tool's parameter schema; %s is how
// targets are written, as a JSON string.
const messageToolSchema = `{"type":"object","properties":{` +
	`"to":{"type":"string","description":%s},` +
	`"text":{"type":"string","description":"The message, in Markdown."},` +
	`"mediaUrls":{"type":"array","items":{"type":"string"},"description":"Public http(s) URLs of images or files to attach."}}}`

// MessageTool is the agent's message tool: it sends text or media to a
// chat on any running bridge, through the router (markup, chunking, the
// outbound ledger), apart from the turn's own reply. A call is sent once
// even if the turn is replayed: its ledger key is the call's id.
type MessageTool struct {
	// Deliverer is the bridge router.
	Deliverer queue.Deliverer
	// Targets reads the to argument's targets (the bridges' registry);
	// nil allows only the current chat.
	Targets core.Targets
	// TargetHelp shows the model how targets are written, in the tool's
	// description (Registry.TargetHelp).
	TargetHelp string
}

var _ tools.Tool = (*MessageTool)(nil)

// Spec describes the tool to the model.
func (t *MessageTool) Spec() tools.Spec {
	return tools.Spec{
		Name: "message",
		Description: "Send a message to a chat: another conversation, a channel, or a person on a chat platform the bot is on. " +
			"Your normal reply already goes to the current chat; use this only to reach somewhere else, or to send media.",
		Parameters: json.RawMessage(fmt.Sprintf(messageToolSchema, toDescription(t.TargetHelp))),
	}
}

// Execute sends one message.
func (t *MessageTool) Execute(ctx context.Context, call tools.Call, _ func(tools.Result)) (tools.Result, error) {
	if t.Deliverer == nil {
		return tools.Result{}, errors.New("no chat platform is running")
	}
	to, _ := call.Args["to"].(string)
	text, _ := call.Args["text"].(string)
	var media []string
	if raw, ok := call.Args["mediaUrls"].([]any); ok {
		for _, m := range raw {
			s, ok := m.(string)
			if !ok || !(strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) {
				return tools.Result{}, fmt.Errorf("mediaUrls must be http(s) URLs; got %v", m)
			}
			media = append(media, s)
		}
	}
	if strings.TrimSpace(text) == "" && len(media) == 0 {
		return tools.Result{}, errors.New("text or mediaUrls is required")
	}
	route := call.Route
	if strings.TrimSpace(to) != "" {
		if t.Targets == nil {
			return tools.Result{}, errors.New("no chat platform is running; omit to to answer in this chat")
		}
		r, err := t.Targets.ParseTarget(to)
		if err != nil {
			return tools.Result{}, err
		}
		route = r
		if !call.SenderIsOwner && (route.Channel != call.Route.Channel || route.To != call.Route.To) {
			return tools.Result{}, tools.Blocked("only the bot's owner (commands.ownerAllowFrom) can send to another chat; omit to to send to this one")
		}
	}
	if route.Channel == "" || route.To == "" {
		return tools.Result{}, errors.New("to is required: this conversation has no chat to send to")
	}
	runID := "message:" + string(call.SessionKey) + ":" + call.ID
	if err := t.Deliverer.Deliver(ctx, queue.Delivery{Kind: queue.DeliveryReply, RunID: runID, SessionKey: call.SessionKey,
		Route: route, Replies: []core.ReplyPayload{{Text: text, MediaURLs: media}}}); err != nil {
		return tools.Result{}, fmt.Errorf("sending to %s failed: %w", describeRoute(route), err)
	}
	return tools.TextResult("Sent to " + describeRoute(route) + "."), nil
}

// describeRoute names a route for the model.
func describeRoute(r core.Route) string {
	s := string(r.Channel) + ":" + string(r.To)
	if r.ThreadID != "" {
		s += " (thread " + r.ThreadID + ")"
	}
	return s
}

// toDescription describes the to parameter as a JSON string.
func toDescription(help string) string {
	d := "Where to send, as <channel>:<chat>"
	if help != "" {
		d += ": " + help
	}
	b, _ := json.Marshal(d + ". Omit to send to the current chat.")
	return string(b)
}
