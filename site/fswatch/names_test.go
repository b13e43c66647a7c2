package fswatch

import "testing"

func TestTemporary(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"rue-saint-denis", false},
		{"guide.json", false},
		{"partial", false},
		{"4913", true},
		{".tmp-guide.json", true},
		{"guide.json~", true},
		{"rue-saint-denis.partial", true},
		{"rue-saint-denis.Partial", true},
		{"rue-saint-denis.part", true},
		{"rue-saint-denis.tmp", true},
		{"rue-saint-denis.uploading", true},
		{"rue-saint-denis.incomplete", true},
		{"plan.pdf.crdownload", true},
	}
	for _, tt := range tests {
		if got := Temporary(tt.name); got != tt.want {
			t.Errorf("Temporary(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
