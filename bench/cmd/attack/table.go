package main

import (
	"strings"
)

// row is one line of the report.
type row struct {
	scenario string
	v        variant
	result   string
	notes    string
}

// tableColumns are the report's columns.
var tableColumns = []string{"scenario", "engine", "proxy_on_loop", "result", "notes"}

// formatTable renders rows as a Markdown table. Cells have "|" escaped and
// newlines flattened, so an error text cannot break the table.
func formatTable(rows []row) string {
	var b strings.Builder
	writeRow(&b, tableColumns)
	seps := make([]string, len(tableColumns))
	for i := range seps {
		seps[i] = "---"
	}
	writeRow(&b, seps)
	for _, r := range rows {
		pol := r.v.proxyOnLoop
		if pol == "" {
			pol = "–"
		}
		scen := r.scenario
		if r.v.path != "" {
			scen += " " + r.v.path
		}
		if r.v.kind != "" {
			scen += " " + r.v.kind
		}
		writeRow(&b, []string{scen, r.v.engine, pol, r.result, r.notes})
	}
	return b.String()
}

func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" ")
		b.WriteString(cell(c))
		b.WriteString(" |")
	}
	b.WriteString("\n")
}

var cellEscaper = strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ")

func cell(s string) string {
	if s == "" {
		return " "
	}
	return cellEscaper.Replace(s)
}
