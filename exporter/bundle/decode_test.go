package bundle

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestTreeReaderAgreesWithEncodingJSON reads tricky but valid JSON with the
// tree reader and checks that the tree means what encoding/json reads.
func TestTreeReaderAgreesWithEncodingJSON(t *testing.T) {
	inputs := []string{
		`{}`,
		" \t\r\n{ \"a\" : [ ] , \"b\" : { } }\n ",
		`{"s":"plain","e":"q\"uote\\back\/slash\b\f\n\r\t","u":"\u00e9\u5317\ud83c\udfe0","bad":"\ud800x"}`,
		`{"n":[0,-0,1.5,-2e10,3E-2,1e+2,12345678901234567890,0.000001]}`,
		`{"b":[true,false,null],"nested":[[[]],[{}],{"x":[{"y":null}]}]}`,
		`{"key with space":1,"ключ":2,"":3,"a.b":4,"0":5}`,
		`{"dup":1,"dup":2}`,
	}
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) {
			tree, problems := readTree([]byte(in))
			if tree == nil {
				t.Fatalf("rejected: %v", problems)
			}
			var buf bytes.Buffer
			tree.encode(&buf)
			var got, want any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("tree encodes to invalid JSON %s: %v", buf.Bytes(), err)
			}
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tree reads\n%v\nencoding/json reads\n%v", got, want)
			}
		})
	}
}

func TestKeyPathAndSteps(t *testing.T) {
	var s steps
	s.pushKey("views")
	s.pushIndex(2)
	s.pushKey("hidden")
	s.pushKey("a b")
	s.pushKey("$schema")
	s.pushKey("_x1")
	s.pushKey("1x")
	if got, want := s.String(), `$.views[2].hidden["a b"]["$schema"]._x1["1x"]`; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"$.views", "$.views", true},
		{"$.views[0].default", "$.views", true},
		{"$.views.x", "$.views", true},
		{"$.viewsX", "$.views", false},
		{"$.views", "$.views[0]", false},
	} {
		if got := within(tc.a, tc.b); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
