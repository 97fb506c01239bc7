package mcpbridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaCache holds resolved input schemas by (widget type, action) and
// the schema's own JSON: two widgets of one type may declare different
// schemas for an action. Capped.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*jsonschema.Resolved
}

const maxSchemas = 1024

// validate checks args against the schema the tool is advertised with,
// cleanSchema(schema) of the provider's schema, naming the offending
// field. key names the (widget type, action) the schema belongs to.
func (c *schemaCache) validate(key string, schema map[string]any, args map[string]any) error {
	if acceptsSimple(schema, args) {
		return nil
	}
	return c.validateFull(key, schema, args)
}

// validateFor is validate for the action of widget tp, naming its key
// ("<widget type>.<action>") only when the schema needs the full
// validator: the common schemas (acceptsSimple) need none.
func (c *schemaCache) validateFor(tp any, action string, schema map[string]any, args map[string]any) error {
	if acceptsSimple(schema, args) {
		return nil
	}
	return c.validateFull(fmt.Sprintf("%T.%s", tp, action), schema, args)
}

// validateFull is validate by jsonschema-go alone.
func (c *schemaCache) validateFull(key string, schema map[string]any, args map[string]any) error {
	raw, err := json.Marshal(cleanSchema(schema))
	if err != nil {
		return fmt.Errorf("the tool's schema is not valid JSON: %w", err)
	}
	key += " " + string(raw)
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
