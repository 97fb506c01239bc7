package mcpbridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaCache holds resolved input schemas, keyed by their JSON. Widget
// schemas are static per (type, action), so it stays small; it is capped
// anyway.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*jsonschema.Resolved
}

const maxSchemas = 1024

// validate checks args against schema, naming the offending field.
func (c *schemaCache) validate(_ string, schema map[string]any, args map[string]any) error {
	raw, err := json.Marshal(schema)
	if err != nil {
		return fmt.Errorf("the tool's schema is not valid JSON: %w", err)
	}
	key := string(raw)
	c.mu.Lock()
	rs, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("the tool's schema is invalid: %w", err)
		}
		if rs, err = s.Resolve(nil); err != nil {
			return fmt.Errorf("the tool's schema is invalid: %w", err)
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxSchemas {
			c.m = map[string]*jsonschema.Resolved{}
		}
		c.m[key] = rs
		c.mu.Unlock()
	}
	if err := rs.Validate(args); err != nil {
		return fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}
