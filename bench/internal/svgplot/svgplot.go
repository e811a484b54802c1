package svgplot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart is a horizontal bar chart.
type Chart struct {
	Title string
	// Axis labels the value axis, e.g. "speed-up vs net_url (×)".
	Axis string
	// Log selects a logarithmic value axis (ratios, latencies spanning
	// decades); values <= 0 are then not drawn.
	Log bool
	// Ref draws a vertical reference line at this value when > 0.
	Ref float64
	// Series names the bars within a row; one legend entry each. A chart
	// with a single unnamed series has no legend.
	Series []string
	Rows   []Row
}

// Row is one labelled group of bars, one per series. NaN values are drawn
// as "n/a". Lo and Hi, when non-nil, give a whisker per value.
type Row struct {
	Label  string
	Values []float64
	Lo, Hi []float64
}

// Layout in SVG user units (pixels).
const (
	width       = 860
	minLabelW   = 80
	charWidth   = 7 // average advance of a 12 px sans-serif glyph, for label room
	rightPad    = 70
	titleHeight = 34
	axisHeight  = 44
	barHeight   = 14
	barGap      = 2
	rowGap      = 8
	legendRow   = 18
	fontSize    = 12
)

// palette holds the series colours (colour-blind-safe, Okabe–Ito).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// Write renders c as a standalone SVG document.
func (c Chart) Write(w io.Writer) error {
	nser := max(len(c.Series), 1)
	for _, r := range c.Rows {
		nser = max(nser, len(r.Values))
	}
	rowH := nser*(barHeight+barGap) + rowGap
	legendH := 0
	if len(c.Series) > 1 {
		legendH = legendRow
	}
	plotTop := titleHeight + legendH
	height := plotTop + len(c.Rows)*rowH + axisHeight
	labelWidth := minLabelW
	for _, r := range c.Rows {
		labelWidth = max(labelWidth, charWidth*len([]rune(r.Label))+16)
	}
	// Labels never take more than half the width; longer ones overflow to
	// the left edge, which is clipped, rather than squeezing the bars away.
	labelWidth = min(labelWidth, width/2)
	x0, x1 := float64(labelWidth), float64(width-rightPad)
	lo, hi := c.extent()
	scale := func(v float64) float64 {
		if c.Log {
			return x0 + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(x1-x0)
		}
		return x0 + (v-lo)/(hi-lo)*(x1-x0)
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n",
		width, height, width, height, fontSize)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", 10, esc(c.Title))
	if legendH > 0 {
		x := labelWidth
		for i, s := range c.Series {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
				x, titleHeight, palette[i%len(palette)], x+14, titleHeight+9, esc(s))
			x += 24 + 8*len(s)
		}
	}
	// Grid and ticks.
	axisY := plotTop + len(c.Rows)*rowH
	for _, t := range ticks(lo, hi, c.Log) {
		x := scale(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, plotTop, x, axisY)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, axisY+14, strconv.FormatFloat(t, 'g', -1, 64))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", (x0+x1)/2, axisY+34, esc(c.Axis))
	// Bars.
	for i, r := range c.Rows {
		y := plotTop + i*rowH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n",
			labelWidth-8, y+(nser*(barHeight+barGap))/2+4, esc(r.Label))
		for j, v := range r.Values {
			by := y + j*(barHeight+barGap)
			if math.IsNaN(v) || (c.Log && v <= 0) {
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#888">n/a</text>`+"\n", x0+4, by+barHeight-3)
				continue
			}
			xv := math.Max(x0, math.Min(scale(v), x1))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n",
				x0, by, xv-x0, barHeight, palette[j%len(palette)])
			if j < len(r.Lo) && j < len(r.Hi) && !math.IsNaN(r.Lo[j]) && !math.IsNaN(r.Hi[j]) && (!c.Log || r.Lo[j] > 0) {
				wl, wh := math.Max(x0, scale(r.Lo[j])), math.Min(x1, scale(r.Hi[j]))
				my := by + barHeight/2
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`+"\n", wl, my, wh, my)
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", xv+4, by+barHeight-3, fmtNum(v))
		}
	}
	if c.Ref > 0 && c.Ref >= lo && c.Ref <= hi {
		x := scale(c.Ref)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c00" stroke-dasharray="4,3"/>`+"\n", x, plotTop-4, x, axisY)
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000"/>`+"\n", x0, plotTop, x0, axisY)
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// extent returns the axis range: every finite value, whisker and the
// reference, padded; on a log axis rounded out to powers of ten.
func (c Chart) extent() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	add := func(v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || (c.Log && v <= 0) {
			return
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, r := range c.Rows {
		for _, vs := range [][]float64{r.Values, r.Lo, r.Hi} {
			for _, v := range vs {
				add(v)
			}
		}
	}
	if c.Ref > 0 {
		add(c.Ref)
	}
	if math.IsInf(lo, 1) {
		if c.Log {
			return 0.1, 10
		}
		return 0, 1
	}
	if c.Log {
		// logPad keeps the smallest bar visible: without it a minimum just
		// above a power of ten would be drawn with almost no length.
		const logPad = 0.3
		return math.Pow(10, math.Floor(math.Log10(lo)-logPad)), math.Pow(10, math.Ceil(math.Log10(hi)+1e-9))
	}
	lo = math.Min(lo, 0)
	if hi == lo {
		hi = lo + 1
	}
	return lo, hi * 1.05
}

// ticks returns axis ticks: 1-2-5 steps per decade on a log axis, about six
// round steps on a linear one.
func ticks(lo, hi float64, log bool) []float64 {
	var t []float64
	if log {
		// Over many decades the 2 and 5 ticks would overlap their labels.
		const maxDecadesWithSubticks = 4
		mults := []float64{1, 2, 5}
		if math.Log10(hi/lo) > maxDecadesWithSubticks {
			mults = mults[:1]
		}
		for d := lo; d <= hi*1.0001; d *= 10 {
			for _, m := range mults {
				if v := d * m; v <= hi*1.0001 {
					t = append(t, v)
				}
			}
		}
		return t
	}
	const wantTicks = 6
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/wantTicks)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= wantTicks {
			step *= m
			break
		}
	}
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		t = append(t, v)
	}
	return t
}

// fmtNum prints a value with about three significant digits.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
	}
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
