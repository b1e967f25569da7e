package fl

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Options are a method's settings as written in the sweep spec (everything in
// its YAML block except "name"). A factory decodes them into its own struct
// with Decode, which rejects unknown fields.
type Options map[string]any

// Decode decodes o into dst (a pointer to a struct with json tags), rejecting
// fields dst does not have. what names the spec block for error messages.
func (o Options) Decode(what string, dst any) error {
	if len(o) == 0 {
		return nil
	}
	b, err := json.Marshal(map[string]any(o))
	if err != nil {
		return fmt.Errorf("%s: %v: %w", what, err, ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("%s: %v; check the field names and types: %w", what, err, ErrInvalid)
	}
	return nil
}
