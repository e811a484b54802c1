package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
)

// The README is the front door: its figures and its tour must stay true.
// These tests hold it to two rules (issue 29):
//
//   - Figures. The table after the `<!-- figures` marker has one row per
//     claim, and each row's last cell links the results file under
//     bench/results/ that the row's figures come from. A figure is a number
//     that starts a cell or follows a space or '(' (so "HTTP/1.1", "h2c"
//     and "avx512" are words, not figures); each must occur, as written, in
//     that file, with no digit or decimal part running on either side (and
//     a ratio written "19.74×" as "19.74×"). The CPU column is the machine
//     the file measured: its last word is the report's "simdedge SIMD
//     level", its other words occur in the report's "CPU" line, case aside.
//     A figure is checked against the whole file, so a number that also
//     occurs elsewhere in it passes: the check catches figures that were
//     retyped, rounded into something new or taken from another report.
//   - Configurations. Every fenced yaml block preceded by the line
//     `<!-- complete -->`, or whose info string is `yaml complete`, passes
//     `simdedge check`, run as an operator would from a directory holding
//     the files the block names.

const (
	readmePath     = "../../README.md"
	figuresMarker  = "<!-- figures"
	completeMarker = "<!-- complete -->"
)

var (
	// figure finds the numbers of a cell: at its start, or after a space
	// or '('; thousands separators and a decimal part belong to the number.
	figure    = regexp.MustCompile(`(?:^|[\s(])(\d+(?:,\d{3})*(?:\.\d+)?)`)
	tableLink = regexp.MustCompile(`\]\((bench/results/[^)\s#]+)\)`)
)

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// figureRow is one row of the README's figures table.
type figureRow struct {
	line  int
	cells []string
}

// figureRows returns the header and the rows of the table that follows
// the figures marker.
func figureRows(doc string) (header []string, rows []figureRow, err error) {
	lines := strings.Split(doc, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, figuresMarker) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, nil, fmt.Errorf("no %q marker before the figures table", figuresMarker)
	}
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "|") {
			if len(rows) > 0 || i > start+3 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(l, "| "), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, figureRow{line: i + 1, cells: cells})
	}
	if len(rows) < 3 {
		return nil, nil, fmt.Errorf("the figures table has %d lines, want a header, its rule and rows", len(rows))
	}
	return rows[0].cells, rows[2:], nil
}

// checkFigures returns what is wrong with the figures table of doc; read
// returns a results file by its path from the repository root.
func checkFigures(doc string, read func(string) ([]byte, error)) []string {
	header, rows, err := figureRows(doc)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	cpuCol := -1
	for i, c := range header {
		if strings.HasPrefix(c, "CPU") {
			cpuCol = i
		}
	}
	if cpuCol < 0 {
		bad = append(bad, "the figures table has no CPU column")
	}
	for _, r := range rows {
		last := r.cells[len(r.cells)-1]
		links := tableLink.FindAllStringSubmatch(last, -1)
		if len(links) != 1 {
			bad = append(bad, fmt.Sprintf("README.md:%d: the last cell links %d results files, want 1", r.line, len(links)))
			continue
		}
		src, err := read(links[0][1])
		if err != nil {
			bad = append(bad, fmt.Sprintf("README.md:%d: %v", r.line, err))
			continue
		}
		text := string(src)
		n := 0
		for j, c := range r.cells[:len(r.cells)-1] {
			if j == cpuCol {
				bad = append(bad, checkMachine(c, text, fmt.Sprintf("README.md:%d", r.line), links[0][1])...)
				continue
			}
			for _, m := range figure.FindAllStringSubmatchIndex(c, -1) {
				n++
				num := c[m[2]:m[3]]
				if strings.HasPrefix(c[m[3]:], "×") {
					num += "×"
				}
				if !containsFigure(text, num) {
					bad = append(bad, fmt.Sprintf("README.md:%d: %s is not in %s", r.line, num, links[0][1]))
				}
			}
		}
		if n == 0 {
			bad = append(bad, fmt.Sprintf("README.md:%d: the row quotes no figure", r.line))
		}
	}
	return bad
}

var (
	reportCPU  = regexp.MustCompile(`(?m)^\| CPU \| (.+) \|$`)
	reportSIMD = regexp.MustCompile(`(?m)^\| simdedge SIMD level \| (\S+) \|$`)
)

// checkMachine checks a CPU cell ("Intel Xeon, avx512") against the
// report's CPU and SIMD level lines.
func checkMachine(cell, report, where, name string) []string {
	words := strings.FieldsFunc(cell, func(r rune) bool { return r == ' ' || r == ',' })
	cpu, simd := reportCPU.FindStringSubmatch(report), reportSIMD.FindStringSubmatch(report)
	if len(words) < 2 || cpu == nil || simd == nil {
		return []string{fmt.Sprintf("%s: the CPU column %q or %s's CPU and SIMD level lines are missing", where, cell, name)}
	}
	var bad []string
	if words[len(words)-1] != simd[1] {
		bad = append(bad, fmt.Sprintf("%s: SIMD level %s, %s says %s", where, words[len(words)-1], name, simd[1]))
	}
	for _, w := range words[:len(words)-1] {
		if !strings.Contains(strings.ToLower(cpu[1]), strings.ToLower(w)) {
			bad = append(bad, fmt.Sprintf("%s: the CPU column says %q, %s's CPU is %q", where, w, name, cpu[1]))
		}
	}
	return bad
}

// containsFigure reports whether num occurs in text as a whole number:
// not inside a longer one ("9.3" is not in "19.33", "24" not in "1.24").
func containsFigure(text, num string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], num)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(num)
		before := at == 0 || !isDigitOrPoint(text[at-1])
		after := end == len(text) || !(isDigit(text[end]) || (text[end] == '.' && end+1 < len(text) && isDigit(text[end+1])))
		if before && after {
			return true
		}
		i = at + 1
	}
}

func isDigit(c byte) bool        { return c >= '0' && c <= '9' }
func isDigitOrPoint(c byte) bool { return isDigit(c) || c == '.' }

func readResults(p string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(p)))
}

// TestReadmeFigures checks that every figure the README's table quotes
// is in the results file the row links.
func TestReadmeFigures(t *testing.T) {
	doc := readme(t)
	_, rows, err := figureRows(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 5 {
		t.Fatalf("the figures table has %d rows; is the parse broken?", len(rows))
	}
	for _, why := range checkFigures(doc, readResults) {
		t.Error(why)
	}
}

// TestReadmeFiguresBite edits the README's figures as a careless hand
// would and expects the check to notice each.
func TestReadmeFiguresBite(t *testing.T) {
	doc := readme(t)
	for _, c := range []struct{ from, to string }{
		{"| 19.74× |", "| 19.7× |"}, // rounded
		{"| 19.74× |", "| 26× |"},   // the old contradiction
		{"| 9.33 µs |", "| 9.34 µs |"},
		{"| 1.36× |", "| 1.37× |"},
		{"(bench/results/https-59fc040/2026-11-25-vm-https.md)", "(bench/results/https-59fc040/missing.md)"},
		{"| Intel Xeon, avx512 |", "| Intel Xeon, avx2 |"},
		{"| Intel Xeon, avx512 |", "| AMD EPYC, avx512 |"},
	} {
		if !strings.Contains(doc, c.from) {
			t.Fatalf("README.md no longer has %q: update this test", c.from)
		}
		edited := strings.Replace(doc, c.from, c.to, 1)
		if bad := checkFigures(edited, readResults); len(bad) == 0 {
			t.Errorf("changing %q to %q passed the check", c.from, c.to)
		}
	}
	if !containsFigure("x 19.74× y", "19.74") || containsFigure("x 119.74 y", "19.74") ||
		containsFigure("x 19.745 y", "19.74") || !containsFigure("24", "24") || containsFigure("1.24.", "24") {
		t.Error("containsFigure misjudges number boundaries")
	}
}

// completeBlocks returns the yaml blocks of doc marked complete, by the
// line their fence opens on.
func completeBlocks(doc string) (map[int]string, error) {
	lines := strings.Split(doc, "\n")
	blocks := map[int]string{}
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		marked := false
		switch {
		case l == completeMarker:
			if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```yaml" {
				return nil, fmt.Errorf("line %d: %s is not followed by a ```yaml fence", i+1, completeMarker)
			}
			i++
			marked = true
		case l == "```yaml complete":
			marked = true
		}
		if !marked {
			continue
		}
		open := i + 1
		var b strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b.WriteString(lines[i])
			b.WriteByte('\n')
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: the block never closes", open)
		}
		blocks[open] = b.String()
	}
	return blocks, nil
}

// checkBlock runs `simdedge check` on block as an operator would: from a
// directory holding the certificates and document roots it names.
func checkBlock(t *testing.T, block string) (int, string) {
	t.Helper()
	// check parses first (config.Load); the sandbox needs a parsed file.
	if _, err := config.Parse([]byte(block)); err != nil {
		return 1, err.Error()
	}
	src := filepath.Join(t.TempDir(), "edge.yaml")
	if err := os.WriteFile(src, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	file := sandboxExample(t, src)
	t.Chdir(filepath.Dir(file))
	var out, errb bytes.Buffer
	code := run([]string{"check", "-config", filepath.Base(file)}, &out, &errb)
	return code, errb.String()
}

// TestReadmeConfigs checks every configuration the README marks complete
// with `simdedge check`.
func TestReadmeConfigs(t *testing.T) {
	blocks, err := completeBlocks(readme(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 4 {
		t.Fatalf("README.md marks %d blocks complete; the tour has four", len(blocks))
	}
	for line, block := range blocks {
		t.Run(fmt.Sprintf("line%d", line), func(t *testing.T) {
			if code, stderr := checkBlock(t, block); code != 0 {
				t.Errorf("README.md:%d: simdedge check = %d:\n%s", line, code, stderr)
			} else if strings.Contains(stderr, "warning") {
				t.Errorf("README.md:%d: simdedge check warns:\n%s", line, stderr)
			}
		})
	}
}

// TestReadmeConfigsBite breaks a tour block and expects check to refuse
// it, and a marker without its block to be an error.
func TestReadmeConfigsBite(t *testing.T) {
	blocks, err := completeBlocks(readme(t))
	if err != nil {
		t.Fatal(err)
	}
	broken := 0
	for _, block := range blocks {
		if !strings.Contains(block, "upstream: api}") {
			continue
		}
		if code, _ := checkBlock(t, strings.Replace(block, "upstream: api}", "upstream: apj}", 1)); code == 0 {
			t.Error("a block proxying to an upstream it does not define passed the check")
		}
		broken++
		break
	}
	if broken == 0 {
		t.Fatal("no tour block proxies to upstream api: update this test")
	}
	if _, err := completeBlocks("text\n" + completeMarker + "\n\n```yaml\nlisten: x\n```\n"); err == nil {
		t.Error("a marker separated from its block passed")
	}
	if b, err := completeBlocks("```yaml complete\nlisten: x\n```\n"); err != nil || len(b) != 1 {
		t.Errorf("an info-string block: %v, %d blocks", err, len(b))
	}
}
