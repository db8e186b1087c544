package slacktest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxRequestBytes bounds a request body, uploads included.
const maxRequestBytes = 64 << 20

// params are a request's parameters normalized the way the Web API sees
// them: every value is a string, and structured values (blocks,
// attachments, files) are JSON text, whichever encoding carried them.
type params struct {
	contentType string
	token       string
	values      map[string]string
}

// apiError is an {"ok":false} reply; status is 200 unless rate limited or
// a server error. cut and stall are the network failures of CutNext and
// StallNext: no reply at all.
type apiError struct {
	status     int
	code       string
	retryAfter int
	cut        bool
	stall      bool
}

func slackError(code string) *apiError { return &apiError{status: http.StatusOK, code: code} }

// readParams merges the query string with a JSON, urlencoded or multipart
// body and finds the token: the Authorization header's bearer token, else
// the token parameter (slack-go sends form-encoded methods that way).
func readParams(w http.ResponseWriter, r *http.Request) (*params, *apiError) {
	p := &params{values: map[string]string{}}
	for k, v := range r.URL.Query() {
		p.values[k] = v[0]
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "request_too_large"}
		}
		return nil, slackError("invalid_form_data")
	}
	mediaType, mediaParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	p.contentType = mediaType
	if len(bytes.TrimSpace(body)) > 0 {
		switch mediaType {
		case "application/json":
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(body, &obj); err != nil {
				return nil, slackError("invalid_json")
			}
			for k, raw := range obj {
				var s string
				switch {
				case string(raw) == "null":
				case json.Unmarshal(raw, &s) == nil:
					p.values[k] = s
				default:
					p.values[k] = string(raw)
				}
			}
		case "application/x-www-form-urlencoded", "":
			form, err := url.ParseQuery(string(body))
			if err != nil {
				return nil, slackError("invalid_form_data")
			}
			for k, v := range form {
				p.values[k] = v[0]
			}
		case "multipart/form-data":
			form, err := multipart.NewReader(bytes.NewReader(body), mediaParams["boundary"]).ReadForm(maxRequestBytes)
			if err != nil {
				return nil, slackError("invalid_form_data")
			}
			defer form.RemoveAll()
			for k, v := range form.Value {
				p.values[k] = v[0]
			}
		default:
			return nil, slackError("invalid_form_data")
		}
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		p.token = strings.TrimSpace(bearer)
	}
	if p.token == "" {
		p.token = p.values["token"]
	}
	delete(p.values, "token")
	return p, nil
}

// str returns a parameter, "" when absent.
func (p *params) str(name string) string { return p.values[name] }

// bool returns a boolean parameter, def when absent or not a boolean.
func (p *params) bool(name string, def bool) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(p.values[name]))
	if err != nil {
		return def
	}
	return v
}

// rawJSON returns a JSON-valued parameter as raw JSON, nil when absent, and
// false when present but not JSON.
func (p *params) rawJSON(name string) (json.RawMessage, bool) {
	v, ok := p.values[name]
	if !ok || v == "" {
		return nil, true
	}
	if !json.Valid([]byte(v)) {
		return nil, false
	}
	return json.RawMessage(v), true
}
