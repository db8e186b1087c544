package telegramtest

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

// maxRequestBytes bounds a request body; the Bot API's upload limit is 50 MB.
const maxRequestBytes = 50 << 20

// upload is one file part of a multipart request.
type upload struct {
	name string
	data []byte
}

// params are a request's parameters normalized the way the Bot API sees them:
// every value is a string, and structured values (reply_parameters,
// commands, reaction) are JSON text, whichever encoding carried them.
type params struct {
	contentType string
	values      map[string]string
	files       map[string]upload
}

// readParams merges the query string with a JSON, urlencoded or multipart
// body. An empty body is no parameters whatever its Content-Type, because
// go-telegram/bot sends parameterless methods as an empty "multipart" body
// without a closing boundary.
func readParams(w http.ResponseWriter, r *http.Request) (*params, *apiError) {
	p := &params{values: map[string]string{}, files: map[string]upload{}}
	for k, v := range r.URL.Query() {
		p.values[k] = v[0]
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &apiError{code: http.StatusRequestEntityTooLarge, description: "Request Entity Too Large"}
		}
		return nil, badRequest("can't read request body")
	}
	mediaType, mediaParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	p.contentType = mediaType
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	switch mediaType {
	case "application/json":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, badRequest("can't parse JSON object")
		}
		for k, raw := range obj {
			var s string
			switch {
			case string(raw) == "null":
				continue
			case json.Unmarshal(raw, &s) == nil:
				p.values[k] = s
			default:
				p.values[k] = string(raw)
			}
		}
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, badRequest("can't parse URL-encoded form")
		}
		for k, v := range form {
			p.values[k] = v[0]
		}
	case "multipart/form-data":
		form, err := multipart.NewReader(bytes.NewReader(body), mediaParams["boundary"]).ReadForm(maxRequestBytes)
		if err != nil {
			return nil, badRequest("can't parse multipart form: " + err.Error())
		}
		defer form.RemoveAll()
		for k, v := range form.Value {
			p.values[k] = v[0]
		}
		for k, fhs := range form.File {
			f, err := fhs[0].Open()
			if err != nil {
				return nil, badRequest("can't read multipart file " + k)
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return nil, badRequest("can't read multipart file " + k)
			}
			p.files[k] = upload{name: fhs[0].Filename, data: data}
		}
	}
	return p, nil
}

// str returns a parameter, "" when absent.
func (p *params) str(name string) string { return p.values[name] }

// int64 returns an integer parameter, 0 when absent.
func (p *params) int64(name string) (int64, *apiError) {
	v, ok := p.values[name]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, badRequest("invalid " + name + " specified")
	}
	return n, nil
}

// int returns an integer parameter, 0 when absent.
func (p *params) int(name string) (int, *apiError) {
	n, err := p.int64(name)
	return int(n), err
}

// bool returns a boolean parameter, false when absent.
func (p *params) bool(name string) bool {
	v, _ := strconv.ParseBool(strings.TrimSpace(p.values[name]))
	return v
}

// json decodes a JSON-valued parameter into dst; absent leaves dst alone.
func (p *params) json(name string, dst any) *apiError {
	v, ok := p.values[name]
	if !ok || v == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(v), dst); err != nil {
		return badRequest("can't parse " + name + " JSON object")
	}
	return nil
}

// rawJSON returns a JSON-valued parameter as raw JSON, nil when absent or
// not JSON.
func (p *params) rawJSON(name string) json.RawMessage {
	v := p.values[name]
	if v == "" || !json.Valid([]byte(v)) {
		return nil
	}
	return json.RawMessage(v)
}
