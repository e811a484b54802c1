package svgplot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// wellFormed decodes the whole document and returns the element counts.
func wellFormed(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, doc)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
	if counts["svg"] != 1 {
		t.Fatalf("svg elements = %d", counts["svg"])
	}
	return counts
}

func TestRatioChart(t *testing.T) {
	c := Chart{
		Title: "URL <parse> & friends", // must be escaped
		Axis:  "speed-up vs net_url (×)",
		Log:   true,
		Ref:   1,
		Rows: []Row{
			{Label: "kasztp/simdedge", Values: []float64{2.5}, Lo: []float64{2.2}, Hi: []float64{2.9}},
			{Label: "kasztp/nlnwa", Values: []float64{0.06}},
			{Label: "kasztp/missing", Values: []float64{math.NaN()}},
		},
	}
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	counts := wellFormed(t, b.Bytes())
	// Two bars plus the background.
	if counts["rect"] != 3 {
		t.Errorf("rects = %d, want 3", counts["rect"])
	}
	s := b.String()
	for _, want := range []string{"URL &lt;parse&gt; &amp; friends", "n/a", "2.50", "0.06", `stroke="#c00"`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestLatencyChart(t *testing.T) {
	c := Chart{
		Title:  "latency",
		Axis:   "ms",
		Series: []string{"p50", "p75", "p90", "p99"},
		Rows: []Row{
			{Label: "nginx", Values: []float64{0.5, 0.7, 1, 3}},
			{Label: "net_http", Values: []float64{1, 2, 3, 9}},
		},
	}
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	counts := wellFormed(t, b.Bytes())
	// 8 bars, 4 legend swatches, background.
	if counts["rect"] != 13 {
		t.Errorf("rects = %d, want 13", counts["rect"])
	}
}

func TestEmptyChart(t *testing.T) {
	var b bytes.Buffer
	if err := (Chart{Title: "nothing", Log: true}).Write(&b); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, b.Bytes())
}

func TestTicks(t *testing.T) {
	got := ticks(0.1, 10, true)
	want := []float64{0.1, 0.2, 0.5, 1, 2, 5, 10}
	if len(got) != len(want) {
		t.Fatalf("log ticks = %v", got)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("log ticks = %v", got)
		}
	}
	if wide := ticks(0.001, 100, true); len(wide) != 6 {
		t.Errorf("ticks over 5 decades = %v, want powers of ten only", wide)
	}
	lin := ticks(0, 105, false)
	if len(lin) < 3 || len(lin) > 7 || lin[0] != 0 {
		t.Errorf("linear ticks = %v", lin)
	}
}
