package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/simdedge/simdedge/bench/internal/svgplot"
)

// Charts returns the report's plots by file suffix: one ratio chart per
// micro section, and per load scenario a requests/s ratio chart and a
// latency-percentile chart.
func (r *Report) Charts() ([]string, map[string]svgplot.Chart) {
	var order []string
	charts := map[string]svgplot.Chart{}
	add := func(name string, c svgplot.Chart) {
		if _, ok := charts[name]; !ok {
			order = append(order, name)
		}
		charts[name] = c
	}
	// Areas per section: the area goes into a bar's label only when a
	// section has several, and the peer into the title when all share one.
	areas := map[string][]Micro{}
	for _, m := range r.Micro {
		areas[section(m)] = append(areas[section(m)], m)
	}
	for _, m := range r.Micro {
		name := section(m)
		if name == "" {
			name = m.Area
		}
		c, ok := charts[name]
		if !ok {
			title := "speed-up vs peer: " + name
			if p, same := samePeer(areas[name]); same {
				title += " (peer: " + p + ")"
			}
			c = svgplot.Chart{Title: title, Axis: "× faster than the peer (peer time ÷ ours on the basis column; log scale; whiskers: per-round min–max)", Log: true, Ref: 1}
		}
		_, same := samePeer(areas[name])
		for _, row := range m.Rows {
			if row.Impl == m.Spec.Peer.Impl && m.Spec.Peer.Area == m.Area {
				continue
			}
			label := row.Case + "/" + implName(row.Impl)
			if len(areas[name]) > 1 {
				label = m.Area + "/" + label
			}
			if !same {
				label += " vs " + peerName(m)
			}
			c.Rows = append(c.Rows, svgplot.Row{Label: label, Values: []float64{row.Speedup},
				Lo: []float64{row.SpeedupLo}, Hi: []float64{row.SpeedupHi}})
		}
		add(name, c)
	}
	for _, l := range r.Load {
		sums := l.Summaries()
		rps := svgplot.Chart{Title: fmt.Sprintf("load %s: ratios vs %s", l.Kind, l.Peer),
			Axis: "× the peer (req/s: ours ÷ peer's; CPU: peer's CPU per request ÷ ours; whiskers: per-round min–max)", Ref: 1,
			Series: []string{"requests/s", "CPU per request"}}
		lat := svgplot.Chart{Title: fmt.Sprintf("load %s: latency percentiles (median of rounds)", l.Kind), Axis: "latency, ms (log scale)", Log: true}
		for _, p := range Percentiles {
			lat.Series = append(lat.Series, fmt.Sprintf("p%.0f", p))
		}
		for i, row := range l.Rows {
			s := sums[i]
			rps.Rows = append(rps.Rows, svgplot.Row{Label: row.Server, Values: []float64{s.RPSRatio, s.CPURatio},
				Lo: []float64{s.RPSRatioLo, s.CPURatioLo}, Hi: []float64{s.RPSRatioHi, s.CPURatioHi}})
			lr := svgplot.Row{Label: row.Server}
			for _, p := range Percentiles {
				v := math.NaN()
				if len(row.Rounds) > 0 {
					v = s.Latency[p].Median * float64(time.Microsecond) / float64(time.Millisecond)
				}
				lr.Values = append(lr.Values, v)
			}
			lat.Rows = append(lat.Rows, lr)
		}
		add("load-"+l.Kind+"-rps", rps)
		add("load-"+l.Kind+"-latency", lat)
	}
	return order, charts
}

func (r *Report) writePlots(dir, base string) ([]Plot, error) {
	order, charts := r.Charts()
	var plots []Plot
	for _, name := range order {
		c := charts[name]
		file := base + "-" + name + ".svg"
		f, err := os.Create(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		if err := c.Write(f); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		plots = append(plots, Plot{Title: c.Title, File: file})
	}
	return plots, nil
}

func section(m Micro) string {
	if m.Spec.Section == "" {
		return m.Area
	}
	return m.Spec.Section
}

// samePeer reports whether every area of a section has the same peer
// implementation name, and which.
func samePeer(ms []Micro) (string, bool) {
	if len(ms) == 0 {
		return "", false
	}
	p := ms[0].Spec.Peer.Impl
	for _, m := range ms[1:] {
		if m.Spec.Peer.Impl != p {
			return "", false
		}
	}
	return p, true
}
