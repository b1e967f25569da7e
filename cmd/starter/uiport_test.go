package main

import (
	"flag"
	"testing"
)

// TestUIDefault: the UI links follow the dev server's UI port
// (TEMPORAL_UI_PORT, as infra/dev/temporal.sh reads it); TEMPORAL_UI wins.
func TestUIDefault(t *testing.T) {
	tests := []struct {
		ui, port, want string
	}{
		{"", "", "http://localhost:8233"},
		{"", "8302", "http://localhost:8302"},
		{"https://temporal.example.org", "8302", "https://temporal.example.org"},
	}
	for _, tt := range tests {
		t.Setenv("TEMPORAL_UI", tt.ui)
		t.Setenv("TEMPORAL_UI_PORT", tt.port)
		var g globals
		g.register(flag.NewFlagSet("test", flag.ContinueOnError))
		if g.ui != tt.want {
			t.Errorf("TEMPORAL_UI=%q TEMPORAL_UI_PORT=%q: ui %q, want %q", tt.ui, tt.port, g.ui, tt.want)
		}
	}
}
