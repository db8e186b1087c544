package llm

import (
	"encoding/json"
	"sync"
)

// maxCachedSchemas bounds a schemaCache; past it the cache starts afresh.
const maxCachedSchemas = 1024

// schemaCache remembers tool parameter schemas already checked and
// converted for one wire format. The same tools go with every turn, and
// decoding each schema anew for every request was 5% of the daemon's CPU
// per message (issue 24). Safe for concurrent use; no IO.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

// get returns the converted form of params, calling convert on a miss.
// Failures are not remembered.
func (c *schemaCache) get(params json.RawMessage, convert func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	c.mu.Lock()
	raw, ok := c.m[string(params)]
	c.mu.Unlock()
	if ok {
		return raw, nil
	}
	raw, err := convert(params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = make(map[string]json.RawMessage)
	}
	c.m[string(params)] = raw
	c.mu.Unlock()
	return raw, nil
}
